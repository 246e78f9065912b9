import type { Logger } from 'pino';
import { isGone, KubeApiError } from '../errors.ts';
import type { KubeClient, WatchEvent } from './client.ts';
import { type ResourceType, resourcePath } from './resources.ts';
import { type KubeObject, objectKey } from './types.ts';
import { ExponentialBackoff } from './work-queue.ts';

export type InformerHandler = (
  type: 'added' | 'updated' | 'deleted' | 'resync',
  obj: KubeObject,
  old?: KubeObject,
) => void;

export interface InformerOptions {
  namespace?: string;
  labelSelector?: string;
  /** Watch only metadata (PartialObjectMetadata): Secret data never enters the operator's memory. */
  metadataOnly?: boolean;
  /** Periodic resync: every cached object handed to the handler again. 0 disables. */
  resyncMs?: number;
  /** Seconds the server keeps one watch open before we start the next. */
  watchTimeoutSeconds?: number;
  log?: Logger;
  onError?: (err: unknown) => void;
}

/** What the cache keeps of an object: managedFields are dropped (often half an object's size, never read). */
function trim(obj: KubeObject, type: ResourceType): KubeObject {
  const { managedFields: _drop, ...metadata } = obj.metadata;
  return { ...obj, apiVersion: type.apiVersion, kind: type.kind, metadata };
}

const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_WATCH_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/**
 * List, then watch, one kind into a local cache. ANY failure (network, 5xx, 410 Gone, a decode error)
 * restarts the cycle with exponential backoff and a fresh list; a watch the server ends normally
 * resumes from the last resourceVersion. Deletes missed while disconnected come out of the relist.
 */
export class Informer {
  readonly type: ResourceType;
  readonly #client: KubeClient;
  readonly #opts: InformerOptions;
  readonly #cache = new Map<string, KubeObject>();
  readonly #handlers: InformerHandler[] = [];
  readonly #abort = new AbortController();
  readonly #backoff = new ExponentialBackoff(250, 30_000);
  #synced = false;
  #syncWaiters: Array<() => void> = [];
  #resyncTimer: NodeJS.Timeout | undefined;
  #loop: Promise<void> | undefined;
  restarts = 0;

  constructor(client: KubeClient, type: ResourceType, opts: InformerOptions = {}) {
    this.#client = client;
    this.type = type;
    this.#opts = opts;
  }

  on(handler: InformerHandler): this {
    this.#handlers.push(handler);
    return this;
  }

  get synced(): boolean {
    return this.#synced;
  }

  get(namespace: string, name: string): KubeObject | undefined {
    return this.#cache.get(`${namespace}/${name}`);
  }

  list(namespace?: string): KubeObject[] {
    const all = [...this.#cache.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  get size(): number {
    return this.#cache.size;
  }

  /** Put a fresher copy (e.g. the answer of a write) into the cache without notifying handlers. */
  upsert(obj: KubeObject): void {
    this.#cache.set(objectKey(obj), trim(obj, this.type));
  }

  start(): void {
    this.#loop ??= this.#run();
    if (this.#opts.resyncMs) {
      this.#resyncTimer = setInterval(() => {
        for (const obj of this.#cache.values()) this.#emit('resync', obj);
      }, this.#opts.resyncMs);
      this.#resyncTimer.unref();
    }
  }

  /** Resolves once the first list is in the cache. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#syncWaiters.push(resolve);
      signal?.addEventListener('abort', () => reject(new Error('aborted while waiting for informer sync')));
    });
  }

  async stop(): Promise<void> {
    clearInterval(this.#resyncTimer);
    this.#abort.abort();
    await this.#loop?.catch(() => {});
  }

  #emit(type: Parameters<InformerHandler>[0], obj: KubeObject, old?: KubeObject): void {
    for (const handler of this.#handlers) {
      try {
        handler(type, obj, old);
      } catch (err) {
        this.#opts.log?.error({ err, kind: this.type.kind }, 'informer handler failed');
      }
    }
  }

  get #path(): string {
    return resourcePath(this.type, this.#opts.namespace);
  }

  async #list(): Promise<string> {
    const seen = new Set<string>();
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.#client.request<{
        items?: KubeObject[];
        metadata: { resourceVersion: string; continue?: string };
      }>('GET', this.#path, {
        query: { labelSelector: this.#opts.labelSelector, limit: 500, continue: cont },
        accept: this.#opts.metadataOnly ? METADATA_ACCEPT : undefined,
        signal: this.#abort.signal,
      });
      for (const item of page.items ?? []) {
        const obj = trim(item, this.type);
        const key = objectKey(obj);
        seen.add(key);
        const old = this.#cache.get(key);
        this.#cache.set(key, obj);
        if (!old) this.#emit('added', obj);
        else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.#emit('updated', obj, old);
      }
      cont = page.metadata.continue || undefined;
      resourceVersion = page.metadata.resourceVersion;
    } while (cont);
    for (const [key, obj] of this.#cache) {
      if (!seen.has(key)) {
        this.#cache.delete(key);
        this.#emit('deleted', obj);
      }
    }
    return resourceVersion;
  }

  #apply(event: WatchEvent): string | undefined {
    if (event.type === 'ERROR') {
      const status = event.object as { code?: number; reason?: string; message?: string };
      throw new KubeApiError(status.code ?? 500, status.reason ?? 'Unknown', `watch: ${status.message ?? 'error'}`);
    }
    const obj = event.object as KubeObject;
    if (event.type === 'BOOKMARK') return obj.metadata.resourceVersion;
    const full = trim(obj, this.type);
    const key = objectKey(full);
    if (event.type === 'DELETED') {
      this.#cache.delete(key);
      this.#emit('deleted', full);
    } else {
      const old = this.#cache.get(key);
      this.#cache.set(key, full);
      // Our own write, already put in the cache by upsert(): nothing new to tell.
      if (old?.metadata.resourceVersion === full.metadata.resourceVersion) return obj.metadata.resourceVersion;
      this.#emit(old ? 'updated' : 'added', full, old);
    }
    return obj.metadata.resourceVersion;
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    let resourceVersion: string | undefined;
    while (!signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          resourceVersion = await this.#list();
          if (!this.#synced) {
            this.#synced = true;
            for (const wake of this.#syncWaiters) wake();
            this.#syncWaiters = [];
          }
        }
        const startedAt = Date.now();
        await this.#client.watch(
          this.#path,
          {
            labelSelector: this.#opts.labelSelector,
            resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: this.#opts.watchTimeoutSeconds ?? 240 + Math.floor(Math.random() * 60),
          },
          (event) => {
            resourceVersion = this.#apply(event) ?? resourceVersion;
          },
          { signal, accept: this.#opts.metadataOnly ? METADATA_WATCH_ACCEPT : undefined },
        );
        this.#backoff.forget('watch'); // a clean end of stream: resume from resourceVersion
        if (Date.now() - startedAt < 1000) await sleep(1000, signal); // never spin on a server that hangs up
      } catch (err) {
        if (signal.aborted) return;
        this.restarts++;
        resourceVersion = undefined; // any error: relist
        const delay = isGone(err) ? 0 : this.#backoff.next('watch');
        this.#opts.log?.warn({ kind: this.type.kind, err: String(err), retryInMs: delay }, 'watch restarts');
        this.#opts.onError?.(err);
        if (delay > 0) await sleep(delay, signal);
      }
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
