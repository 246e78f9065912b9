// The watcher's ports: every interface between the watcher's parts and the node or the outside. The node hands
// over records (`submit`, as its mempool makes room: `room`, `roomChanged`), says whether it is synced (`ready`)
// and where its passes go in each interval (`phase`); the clock, the log and the metrics come with the watcher's
// options; the brokers are reached through http-client.ts's BrokerHttp. node/watch.ts supplies the real ones;
// the tests and the benchmark supply their own.
import type { BrokerHttp } from './http-client.ts';
import type { WatcherMetrics } from './metrics.ts';
import type { ObservationRecord } from './record.ts';

export type { BrokerHttp, WatcherMetrics };

/** What the watcher needs from the node. */
export interface WatcherPorts {
  /** Offers records to the mempool (which gossips the new ones); returns how many were new. */
  submit(records: ObservationRecord[]): number;
  /** How many more records the watcher may hand over now (the free part of the node's window). */
  room(): number;
  /** Resolves when there may be room again (a block was finalized); default: after a short while. */
  roomChanged?(): Promise<void>;
  /** False while the node is catching up with its peers: a pass then waits (its memory would be stale). */
  ready?(): boolean;
  /**
   * Where in each poll (or sweep) interval this node's passes start, as a fraction in [0, 1): the validators spread
   * their passes over the interval (nextPassAt), so one of them looks soon after any change. Default 0.
   */
  phase?(): number;
}

/** Wall-clock time in ms since the epoch (Date.now unless the options say otherwise). */
export type Now = () => number;

/** Structured logging, as pino's Logger does it. */
export interface WatchLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Whether the watcher is stopping: a pass waiting for room, a second read and the notified worker end then. */
export type Stopping = () => boolean;
