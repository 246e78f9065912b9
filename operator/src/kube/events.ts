import type { Logger } from 'pino';
import type { KubeClient } from './client.ts';
import { RESOURCES, resourcePath } from './resources.ts';
import type { KubeObject } from './types.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventInput {
  type: EventType;
  /** CamelCase, machine-readable: Created, Updated, Deleted, Refused, SecretNotFound… */
  reason: string;
  /** What the operator did to the object: Create, Update, Delete, Refuse, Reconcile. */
  action: string;
  /** For a person. Never contains Secret data. */
  note: string;
}

const CONTROLLER = 'scriptorium.dev/operator';

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export function microTime(date = new Date()): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Records Kubernetes Events (events.k8s.io/v1, core v1 as fallback) about a custom resource.
 * The same event about the same object is written at most once per `dedupeMs`, so a resource stuck in
 * a retry loop does not flood the namespace.
 */
export class EventRecorder {
  readonly #client: KubeClient;
  readonly #instance: string;
  readonly #log: Logger | undefined;
  readonly #recent = new Map<string, number>();
  readonly #dedupeMs: number;
  #useCore = false;

  constructor(client: KubeClient, instance: string, options: { log?: Logger; dedupeMs?: number } = {}) {
    this.#client = client;
    this.#instance = instance;
    this.#log = options.log;
    this.#dedupeMs = options.dedupeMs ?? 5 * 60_000;
  }

  async record(regarding: KubeObject, event: EventInput, related?: KubeObject): Promise<void> {
    const namespace = regarding.metadata.namespace ?? 'default';
    const dedupeKey = `${regarding.metadata.uid}|${event.reason}|${event.note}`;
    const now = Date.now();
    const last = this.#recent.get(dedupeKey);
    if (last !== undefined && now - last < this.#dedupeMs) return;
    this.#recent.set(dedupeKey, now);
    if (this.#recent.size > 10_000) {
      for (const [k, t] of this.#recent) if (now - t > this.#dedupeMs) this.#recent.delete(k);
    }
    const ref = (o: KubeObject) => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.metadata.name,
      namespace: o.metadata.namespace,
      uid: o.metadata.uid,
    });
    const name = `${regarding.metadata.name}.${now.toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`;
    try {
      if (!this.#useCore) {
        await this.#client.request('POST', resourcePath(RESOURCES.Event, namespace), {
          body: {
            apiVersion: 'events.k8s.io/v1',
            kind: 'Event',
            metadata: { name, namespace },
            eventTime: microTime(new Date(now)),
            reportingController: CONTROLLER,
            reportingInstance: this.#instance,
            action: event.action,
            reason: event.reason,
            note: event.note.slice(0, 1024),
            type: event.type,
            regarding: ref(regarding),
            ...(related ? { related: ref(related) } : {}),
          },
        });
        return;
      }
      const time = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
      await this.#client.request('POST', resourcePath(RESOURCES.CoreEvent, namespace), {
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name, namespace },
          involvedObject: ref(regarding),
          reason: event.reason,
          message: event.note.slice(0, 1024),
          type: event.type,
          action: event.action,
          source: { component: CONTROLLER },
          reportingComponent: CONTROLLER,
          reportingInstance: this.#instance,
          firstTimestamp: time,
          lastTimestamp: time,
          count: 1,
        },
      });
    } catch (err) {
      if (!this.#useCore && (err as { status?: number }).status === 404) {
        this.#useCore = true;
        this.#recent.delete(dedupeKey);
        return this.record(regarding, event, related);
      }
      // An event is best effort: never fail a reconcile because of one.
      this.#log?.warn({ err: String(err), reason: event.reason }, 'event not recorded');
    }
  }
}

/**
 * Collects the Events of one reconcile and writes one Event per reason, listing every object, e.g.
 * "Created Secret web-worker-secret; Created Service web" — every create, update and delete is still recorded,
 * at a fraction of the API writes.
 */
export class EventBatch {
  readonly #items = new Map<string, { event: EventInput; notes: string[] }>();

  add(event: EventInput): void {
    const key = `${event.type}|${event.reason}|${event.action}`;
    const item = this.#items.get(key);
    if (item) item.notes.push(event.note);
    else this.#items.set(key, { event, notes: [event.note] });
  }

  get size(): number {
    return this.#items.size;
  }

  async flush(recorder: EventRecorder, regarding: KubeObject): Promise<void> {
    const items = [...this.#items.values()];
    this.#items.clear();
    for (const { event, notes } of items) await recorder.record(regarding, { ...event, note: notes.join('; ') });
  }
}
