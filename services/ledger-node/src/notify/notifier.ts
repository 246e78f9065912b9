// Turns finalized blocks into tamper notifications: for each TAMPERED integrity record of a block
// that is final, one durable delivery per configured channel, scheduled by the responsibility rule
// (responsibility.ts): the block's proposer at once, each backup validator after its rank × grace,
// asking the lower-ranked validators first. Nothing is ever queued for a block that is not final.
// The queue's cursor is the last height turned into deliveries, so a restart neither repeats nor
// skips a block.
import type { Block, IntegrityRecord, LightEvidence } from '@scriptorium/ledger-protocol';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { Counter, Gauge } from 'prom-client';
import { isObservationRecord } from '../broker/record.ts';
import type { NotifyConfig } from './config.ts';
import { Dispatcher } from './dispatcher.ts';
import { tamperEvent } from './event.ts';
import { DeliveryQueue, deliveryKey, type QueueItem } from './queue.ts';
import { deliverAt, deliveryRank, lowerRanked } from './responsibility.ts';
import type { Sink } from './sink.ts';
import { createSyslogSink } from './syslog.ts';
import { createWebhookSink } from './webhook.ts';

export interface NotifierPorts {
  /** The validator set active at a height (in the chain's order). */
  activeSetAt(height: number): readonly string[];
  /** Light evidence of record `index` of a finalized block (what GET /evidence serves); null when there is none. */
  evidenceFor(block: Block, index: number): LightEvidence | null;
  /** Asks a validator whether it delivered the event to the sink; undefined when it does not answer. */
  askDelivered(validator: string, eventId: string, sink: string): Promise<boolean | undefined>;
}

export interface NotifierOptions {
  config: NotifyConfig;
  dataDir: string;
  /** This node's public key. */
  self: string;
  chainId: string;
  ports: NotifierPorts;
  /** Channels; by default those of the configuration. */
  sinks?: Sink[];
  logger?: Logger;
  registry?: Registry;
  now?: () => number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

/** The channels a configuration names: each webhook URL (signed with the one secret), and syslog. */
export function sinksOf(config: NotifyConfig): Sink[] {
  const sinks: Sink[] = config.webhookUrls.map((url) => createWebhookSink({ url, secret: config.webhookSecret }));
  if (config.syslog) sinks.push(createSyslogSink(config.syslog));
  return sinks;
}

/** The TAMPERED records of a block, with their index. */
function tamperedRecords(block: Block): Array<[number, IntegrityRecord]> {
  const out: Array<[number, IntegrityRecord]> = [];
  block.records.forEach((r, i) => {
    if (isObservationRecord(r) && r.verdict === 'TAMPERED') out.push([i, r]);
  });
  return out;
}

export class Notifier {
  readonly queue: DeliveryQueue;
  readonly sinks: readonly Sink[];
  private readonly options: NotifierOptions;
  private readonly dispatcher: Dispatcher;
  private readonly now: () => number;
  private readonly delivered: Counter<'sink' | 'result'> | undefined;
  private readonly depth: Gauge | undefined;

  /** A notifier, or undefined when no channel is configured. */
  static create(options: NotifierOptions): Notifier | undefined {
    const sinks = options.sinks ?? sinksOf(options.config);
    if (sinks.length === 0) return undefined;
    return new Notifier(options, sinks);
  }

  private constructor(options: NotifierOptions, sinks: Sink[]) {
    this.options = options;
    this.sinks = sinks;
    this.now = options.now ?? Date.now;
    this.queue = DeliveryQueue.open(options.dataDir);
    if (options.registry) {
      const registers = [options.registry];
      this.delivered = new Counter({
        name: 'scriptorium_ledger_notifications_total',
        help: 'Tamper notification outcomes by channel: delivered, failed (retried later), skipped (another validator delivered)',
        labelNames: ['sink', 'result'],
        registers,
      });
      this.depth = new Gauge({
        name: 'scriptorium_ledger_notify_queue_depth',
        help: 'Deliveries waiting in the durable notification queue',
        registers,
      });
    }
    this.dispatcher = new Dispatcher({
      queue: this.queue,
      sinks,
      now: this.now,
      ...(options.backoffBaseMs !== undefined ? { backoffBaseMs: options.backoffBaseMs } : {}),
      ...(options.backoffMaxMs !== undefined ? { backoffMaxMs: options.backoffMaxMs } : {}),
      alreadyDelivered: (item) => this.askedDelivered(item),
      onDelivered: (item, attempts) => {
        this.delivered?.inc({ sink: item.sink, result: 'delivered' });
        this.depth?.set(this.queue.size);
        options.logger?.info(
          { sink: item.sink, record: item.event.id, height: item.event.height, attempts },
          'tamper notification delivered',
        );
      },
      onFailed: (item, err, attempts) => {
        this.delivered?.inc({ sink: item.sink, result: 'failed' });
        options.logger?.warn(
          { sink: item.sink, record: item.event.id, attempts, error: err.message },
          'tamper notification not delivered; will retry',
        );
      },
      onSkipped: (item) => {
        this.delivered?.inc({ sink: item.sink, result: 'skipped' });
        this.depth?.set(this.queue.size);
      },
    });
  }

  /** Height of the last block turned into deliveries (-1: none yet). */
  get cursor(): number {
    return this.queue.cursor;
  }

  start(): void {
    this.depth?.set(this.queue.size);
    this.dispatcher.start();
  }

  async stop(): Promise<void> {
    await this.dispatcher.stop();
    for (const s of this.sinks) await s.close();
    this.queue.close();
  }

  /** Marks every block up to `height` as handled without notifying (a node's first start on a long chain). */
  skipTo(height: number): void {
    this.queue.add([], height);
  }

  /** True when this node delivered the event to that channel (answers a backup validator's question). */
  deliveredBy(eventId: string, sink: string): boolean {
    return this.queue.wasDelivered(deliveryKey(sink, eventId));
  }

  /**
   * A finalized block (in height order; blocks at or below the cursor are ignored): its TAMPERED records
   * become deliveries, durably, before the cursor moves past it.
   */
  onFinalized(block: Block, finalizedAt = this.now()): void {
    const height = block.header.height;
    if (height <= this.queue.cursor) return;
    const items: QueueItem[] = [];
    const tampered = tamperedRecords(block);
    if (tampered.length > 0) {
      const active = this.options.ports.activeSetAt(height);
      const rank = deliveryRank(active, block.header.proposer, this.options.self);
      if (rank !== undefined) {
        const askFirst = lowerRanked(active, block.header.proposer, rank);
        const notBefore = deliverAt(finalizedAt, rank, this.options.config.takeoverGraceMs);
        for (const [index, record] of tampered) {
          const evidence = this.options.ports.evidenceFor(block, index);
          if (!evidence) continue;
          const event = tamperEvent({
            chainId: this.options.chainId,
            blockTime: block.header.timestamp,
            record,
            evidence,
          });
          for (const sink of this.sinks)
            items.push({ key: deliveryKey(sink.name, event.id), sink: sink.name, event, notBefore, askFirst });
        }
      }
    }
    this.queue.add(items, height);
    this.depth?.set(this.queue.size);
    if (items.length > 0) this.dispatcher.kick();
  }

  private async askedDelivered(item: QueueItem): Promise<boolean> {
    for (const validator of item.askFirst) {
      if (validator === this.options.self) continue;
      const answer = await this.options.ports.askDelivered(validator, item.event.id, item.sink).catch(() => undefined);
      if (answer === true) return true;
    }
    return false;
  }
}
