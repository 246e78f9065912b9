export { type DroppedRequest, type DroppingProxy, startDroppingProxy } from './dropping-proxy.ts';
export { type HostileCase, type HostileNode, startHostileNode } from './hostile-node.ts';
export { sampleEvent } from './sample-event.ts';
export {
  deframe,
  parseRfc5424,
  type SyslogMessage,
  type SyslogReceiver,
  startSyslogReceiver,
} from './syslog-receiver.ts';
export { type ReceivedWebhook, startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';
