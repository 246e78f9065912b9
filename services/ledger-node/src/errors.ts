// Every error the node reports: a stable code, the HTTP status it maps to, and a message.
// Route handlers throw these; the shared error plugin (@scriptorium/http) turns them into `{error: string}` bodies.
import { HttpError } from '@scriptorium/http';
import type { RejectReason } from './consensus/index.ts';

export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'not_found'
  | 'payload_too_large'
  | 'rate_limited'
  | 'queue_full'
  | 'consensus_refused'
  | 'not_validator'
  | 'invalid_block'
  | 'conflict'
  | 'config'
  | 'storage_corrupt'
  | 'internal';

const statusOf: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  not_found: 404,
  payload_too_large: 413,
  rate_limited: 429,
  queue_full: 503,
  consensus_refused: 400,
  not_validator: 400,
  invalid_block: 400,
  conflict: 409,
  config: 500,
  storage_corrupt: 500,
  internal: 500,
};

export class NodeError extends HttpError {
  declare readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string) {
    super(code, statusOf[code], message);
    this.name = 'NodeError';
  }
}

/**
 * A consensus message the gate's door refused (POST /consensus → 400 "malformed payload" in the spec's terms),
 * with the gate's own reason, also the label it counts under in rejected_messages_total: `malformed`,
 * `wrong_chain`, `unknown_sender` or `bad_signature`. The body is `{error}` whose text names the reason and
 * what was wrong, e.g. `consensus message refused: wrong_chain (chain other)`.
 */
export class ConsensusRefused extends NodeError {
  readonly reason: RejectReason;
  constructor(reason: RejectReason, detail: string) {
    super('consensus_refused', `consensus message refused: ${reason}${detail ? ` (${detail.slice(0, 200)})` : ''}`);
    this.name = 'ConsensusRefused';
    this.reason = reason;
  }
}

export const badRequest = (message: string): NodeError => new NodeError('bad_request', message);
export const notFound = (message: string): NodeError => new NodeError('not_found', message);

/** Raised by config loading; main prints `message` as the one line and exits 2. */
export class ConfigError extends NodeError {
  readonly variable: string;
  constructor(variable: string, detail: string) {
    super('config', `invalid configuration: ${variable}: ${detail}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}
