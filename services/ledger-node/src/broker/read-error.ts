// Why a broker could not be read completely. A pass that meets one records nothing for that
// broker (never "entity deleted"); the reason goes to the metric, the log and the watcher status.

export type BrokerReadReason =
  /** Connection refused, reset, DNS, TLS failure: no HTTP answer at all. */
  | 'unreachable'
  /** No answer within the timeout. */
  | 'timeout'
  /** An HTTP status other than 200 (after retries for 5xx and 429). */
  | 'http_status'
  /** A body that is not JSON, not an array of entities, or a missing/invalid count header. */
  | 'malformed'
  /** The listing changed under the pass (count moved, a page came back short, an entity twice). */
  | 'inconsistent';

export class BrokerReadError extends Error {
  readonly broker: string;
  readonly reason: BrokerReadReason;

  constructor(broker: string, reason: BrokerReadReason, detail: string) {
    super(`${broker}: ${reason}: ${detail}`);
    this.name = 'BrokerReadError';
    this.broker = broker;
    this.reason = reason;
  }
}
