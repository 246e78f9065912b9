// Notification channels against real local receivers: a signed webhook with the idempotency key,
// retries while the receiver fails, syslog over UDP and TCP read back by a strict RFC 5424 parser,
// a takeover that finds the event already delivered, and a delivery queue that survives kill -9.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleEvent, startSyslogReceiver, startWebhookReceiver } from '@scriptorium/harness/test-receivers';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createSyslogSink,
  createWebhookSink,
  DeliveryQueue,
  Dispatcher,
  deliveryKey,
  parseSyslogTarget,
  type QueueItem,
  type Sink,
  type TamperEvent,
} from '../src/notify/index.ts';
import { sleep } from './helpers.ts';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'notify-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function enqueue(queue: DeliveryQueue, sink: Sink, event: TamperEvent, extra: Partial<QueueItem> = {}): void {
  queue.add([{ key: deliveryKey(sink.name, event.id), sink: sink.name, event, notBefore: 0, askFirst: [], ...extra }]);
}

describe('webhook delivery', () => {
  it('POSTs the event as JSON with a verifiable signature, the idempotency key and the event type', async () => {
    const receiver = await startWebhookReceiver({ secret: 'whsec_1234567890' });
    const sink = createWebhookSink({ url: receiver.url, secret: 'whsec_1234567890' });
    const queue = DeliveryQueue.open(tempDir());
    const dispatcher = new Dispatcher({ queue, sinks: [sink] });
    dispatcher.start();
    const event = sampleEvent();
    enqueue(queue, sink, event);
    dispatcher.kick();
    await until('delivery', () => receiver.received.length === 1 && queue.size === 0);
    const got = receiver.received[0];
    expect(got?.verified).toBe(true);
    expect(got?.idempotencyKey).toBe(event.id);
    expect(got?.headers['scriptorium-event']).toBe('tamper');
    expect(got?.headers['content-type']).toBe('application/json');
    expect(got?.body).toEqual(event);
    expect(got?.body).toMatchObject({
      chain_id: 'dev',
      height: event.evidence.proof.height,
      index: event.evidence.proof.index,
      block_hash: event.evidence.proof.block_hash,
      evidence: { format: 'scriptorium-ledger-evidence/1' },
    });
    await dispatcher.stop();
    await sink.close();
    await receiver.close();
  });

  it('retries with backoff while the receiver fails, then delivers once', async () => {
    const receiver = await startWebhookReceiver({ secret: 's3cret-s3cret' });
    receiver.failNext(3, 500);
    const sink = createWebhookSink({ url: receiver.url, secret: 's3cret-s3cret' });
    const queue = DeliveryQueue.open(tempDir());
    const failures: number[] = [];
    let deliveredAfter = 0;
    const dispatcher = new Dispatcher({
      queue,
      sinks: [sink],
      backoffBaseMs: 30,
      backoffMaxMs: 200,
      onFailed: (_i, _e, n) => failures.push(n),
      onDelivered: (_i, n) => {
        deliveredAfter = n;
      },
    });
    dispatcher.start();
    enqueue(queue, sink, sampleEvent());
    dispatcher.kick();
    await until('delivery after failures', () => queue.size === 0, 20_000);
    expect(failures).toEqual([1, 2, 3]);
    expect(deliveredAfter).toBe(4);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]?.verified).toBe(true);
    await dispatcher.stop();
    await sink.close();
    await receiver.close();
  });

  it('a takeover item asks first, and does not deliver what another node already delivered', async () => {
    const receiver = await startWebhookReceiver();
    const sink = createWebhookSink({ url: receiver.url });
    const queue = DeliveryQueue.open(tempDir());
    const skipped: string[] = [];
    const dispatcher = new Dispatcher({
      queue,
      sinks: [sink],
      alreadyDelivered: async (item) => item.event.id.startsWith('1'),
      onSkipped: (item) => skipped.push(item.event.id),
    });
    dispatcher.start();
    enqueue(queue, sink, sampleEvent('1'.repeat(64)), { askFirst: ['k0'] });
    enqueue(queue, sink, sampleEvent('2'.repeat(64)), { askFirst: ['k0'] });
    dispatcher.kick();
    await until('both handled', () => queue.size === 0);
    expect(skipped).toEqual(['1'.repeat(64)]);
    expect(receiver.received.map((r) => r.body.id)).toEqual(['2'.repeat(64)]);
    await dispatcher.stop();
    await sink.close();
    await receiver.close();
  });

  it('the queue survives kill -9 of the delivering process: a restarted one delivers', async () => {
    const dir = tempDir();
    const receiver = await startWebhookReceiver({ secret: 'kill-nine-secret' });
    receiver.failNext(1_000_000, 503);
    const child = (mode?: string) =>
      spawn(
        process.execPath,
        [
          join(import.meta.dirname, 'fixtures', 'notify-child.ts'),
          dir,
          receiver.url,
          'kill-nine-secret',
          ...(mode ? [mode] : []),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
    const first = child('add');
    let out = '';
    first.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    await until('a failed attempt', () => out.includes('failed 1'));
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    expect(receiver.received).toHaveLength(0);
    receiver.failNext(0);
    const second = child();
    let out2 = '';
    second.stdout?.on('data', (c: Buffer) => {
      out2 += c.toString();
    });
    const code = await new Promise<number | null>((r) => second.once('exit', r));
    expect(code).toBe(0);
    expect(out2).toContain('drained');
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]?.verified).toBe(true);
    expect(receiver.received[0]?.body.id).toBe('9'.repeat(64));
    expect(DeliveryQueue.open(dir).size).toBe(0);
    await receiver.close();
  });
});

describe.each(['udp', 'tcp'] as const)('syslog over %s', (protocol) => {
  it('delivers RFC 5424 messages with the ids in structured data', async () => {
    const receiver = await startSyslogReceiver(protocol);
    const target = parseSyslogTarget(receiver.target);
    if ('error' in target) throw new Error(target.error);
    const sink = createSyslogSink(target);
    const queue = DeliveryQueue.open(tempDir());
    const dispatcher = new Dispatcher({ queue, sinks: [sink] });
    dispatcher.start();
    const events = [sampleEvent('1'.repeat(64)), sampleEvent('2'.repeat(64), 'urn:ngsi-ld:Sensor:000002')];
    for (const e of events) enqueue(queue, sink, e);
    dispatcher.kick();
    await until('two messages', () => receiver.messages.length === 2);
    expect(receiver.errors).toEqual([]);
    const ids = receiver.messages.map((m) => m.structuredData['tamper@32473']?.record_id).sort();
    expect(ids).toEqual(events.map((e) => e.id));
    expect(receiver.messages[0]).toMatchObject({
      facility: 10,
      severity: 2,
      msgId: 'TAMPER',
      appName: 'scriptorium-ledger',
    });
    await dispatcher.stop();
    await sink.close();
    await receiver.close();
  });
});

describe('syslog over tcp, receiver restarted', () => {
  it('reconnects after the receiver dropped the connection', async () => {
    let receiver = await startSyslogReceiver('tcp');
    const target = parseSyslogTarget(receiver.target);
    if ('error' in target) throw new Error(target.error);
    const sink = createSyslogSink(target);
    await sink.deliver(sampleEvent('1'.repeat(64)));
    await until('first', () => receiver.messages.length === 1);
    await receiver.close();
    await expect(sink.deliver(sampleEvent('3'.repeat(64)))).rejects.toThrow();
    receiver = await startSyslogReceiver('tcp', target.port);
    await sink.deliver(sampleEvent('2'.repeat(64)));
    await until('second', () => receiver.messages.length === 1);
    expect(receiver.messages[0]?.structuredData['tamper@32473']?.record_id).toBe('2'.repeat(64));
    await sink.close();
    await receiver.close();
  });
});
