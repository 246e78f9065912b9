export { type NotifyConfig, notifyConfig } from './config.ts';
export { Dispatcher, type DispatcherOptions } from './dispatcher.ts';
export { TAMPER_EVENT, type TamperEvent, tamperEvent } from './event.ts';
export { Notifier, type NotifierOptions, type NotifierPorts, sinksOf } from './notifier.ts';
export { DeliveryQueue, deliveryKey, type QueueItem } from './queue.ts';
export { deliverAt, deliveryRank, lowerRanked } from './responsibility.ts';
export {
  DEFAULT_TOLERANCE_SECONDS,
  IDEMPOTENCY_HEADER,
  SIGNATURE_HEADER,
  signWebhook,
  verifyWebhook,
} from './signature.ts';
export { DeliveryError, type Sink } from './sink.ts';
export { createSyslogSink, formatTamperSyslog, octetFrame, parseSyslogTarget, type SyslogTarget } from './syslog.ts';
export { createWebhookSink, EVENT_HEADER, webhookName } from './webhook.ts';
