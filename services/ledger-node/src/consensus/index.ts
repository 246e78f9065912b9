/**
 * Consensus (QBFT / IBFT 2.0 rules) as a pure state machine. See README.md in this folder for the
 * engine contract: events in, actions out, and the persistence rule.
 *
 * @example
 * const engine = createEngine({ chainId, self: signer.publicKey, sign: signer.sign, baseTimeoutMs: 1000 }, saved);
 * for (const action of engine.step({ type: 'start', ctx: heightContextAfter(tip, timeline) })) await execute(action);
 */

export { createEngine } from './engine.ts';
export {
  type Admission,
  admit,
  type ChainView,
  MAX_BUFFERED,
  MAX_BUFFERED_PER_AUTHOR,
  MAX_HEIGHTS_AHEAD,
  MAX_ROUNDS_AHEAD,
  REJECT_REASONS,
  type RejectReason,
} from './gate.ts';
export { PersistedStateSchema, parsePersistedState } from './persisted-state.ts';
export { heightContextAfter, proposerFor } from './proposer.ts';
export type {
  Engine,
  EngineAction,
  EngineConfig,
  EngineEvent,
  EngineStatus,
  HeightContext,
  PersistedState,
} from './types.ts';
export * as validation from './validation/index.ts';
export { type CachedVerify, cachedVerify, VERIFY_CACHE_MAX } from './verify-cache.ts';
