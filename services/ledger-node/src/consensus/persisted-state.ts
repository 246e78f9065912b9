import {
  Block,
  CommitMessage,
  Height,
  PrePrepareMessage,
  PrepareMessage,
  Round,
  RoundChangeMessage,
} from '@scriptorium/ledger-protocol';
import { z } from 'zod';
import type { PersistedState } from './types.ts';

/** Schema of the engine's persisted state (what a `persist` action carries), for reading it back from disk. */
export const PersistedStateSchema = z.strictObject({
  version: z.literal(1),
  height: Height,
  round: Round,
  locked: z.strictObject({ round: Round, block: Block, prepares: z.array(PrepareMessage) }).nullable(),
  sent: z.strictObject({
    proposal: PrePrepareMessage.nullable(),
    prepare: PrepareMessage.nullable(),
    commit: CommitMessage.nullable(),
    roundChange: RoundChangeMessage.nullable(),
  }),
});

/**
 * Parses a persisted state read back from storage; throws a ZodError when it is not one.
 * @example const saved = parsePersistedState(JSON.parse(text));
 */
export function parsePersistedState(value: unknown): PersistedState {
  return PersistedStateSchema.parse(value);
}
