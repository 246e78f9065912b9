import type { Block, ValidatorChange } from './schemas.ts';

/** f = floor((N − 1) / 3): the number of faulty validators tolerated. */
export function maxFaulty(n: number): number {
  return Math.floor((n - 1) / 3);
}

/** Quorum = N − floor((N − 1) / 3). */
export function quorumSize(n: number): number {
  return n - maxFaulty(n);
}

export interface AppliedChanges {
  /** The new active set, sorted. */
  validators: string[];
  applied: ValidatorChange[];
  /** Adds of an existing validator, removes of an absent one, and removes that would empty the set. */
  discarded: ValidatorChange[];
}

/**
 * Applies validator changes in order. An ADD of a present key or a REMOVE of an absent key is
 * discarded, as is a REMOVE that would leave no validator at all.
 */
export function applyChanges(current: readonly string[], changes: readonly ValidatorChange[]): AppliedChanges {
  const set = new Set(current);
  const applied: ValidatorChange[] = [];
  const discarded: ValidatorChange[] = [];
  for (const change of changes) {
    if (change.action === 'ADD') {
      if (set.has(change.validator)) discarded.push(change);
      else {
        set.add(change.validator);
        applied.push(change);
      }
    } else if (!set.has(change.validator) || set.size === 1) discarded.push(change);
    else {
      set.delete(change.validator);
      applied.push(change);
    }
  }
  return { validators: [...set].sort(), applied, discarded };
}

/**
 * The active validator set per height, built block by block from genesis. The set active at height h
 * is genesis with the changes of blocks 0..h−1 applied (block 0's ADDs form the initial set; a change
 * committed in block h takes effect at h + 1).
 * @example const t = createValidatorTimeline(genesis); t.append(block1); t.at(2)
 */
export interface ValidatorTimeline {
  /** Height of the last block appended. */
  readonly tip: number;
  /** Active set at `height` (1 ≤ height ≤ tip + 1); sorted. */
  at(height: number): readonly string[];
  /** Appends the next block (height tip + 1); returns the changes that were applied. */
  append(block: Block): AppliedChanges;
}

export function createValidatorTimeline(genesis: Block): ValidatorTimeline {
  if (genesis.header.height !== 0) throw new RangeError('timeline must start at genesis');
  // segments[i] = [fromHeight, set]; sorted by fromHeight.
  const first = applyChanges([], genesis.validator_changes);
  const segments: Array<[number, readonly string[]]> = [[1, first.validators]];
  let tip = 0;
  const at = (height: number): readonly string[] => {
    if (!Number.isInteger(height) || height < 1 || height > tip + 1) {
      throw new RangeError(`no active set known for height ${height} (tip ${tip})`);
    }
    for (let i = segments.length - 1; i >= 0; i--) {
      const seg = segments[i] as [number, readonly string[]];
      if (seg[0] <= height) return seg[1];
    }
    throw new RangeError('unreachable');
  };
  return {
    get tip() {
      return tip;
    },
    at,
    append(block) {
      if (block.header.height !== tip + 1)
        throw new RangeError(`expected block ${tip + 1}, got ${block.header.height}`);
      const result = applyChanges(at(tip + 1), block.validator_changes);
      tip++;
      if (result.applied.length > 0) segments.push([tip + 1, result.validators]);
      return result;
    },
  };
}

/** The active set at `height`, computed from the chain from genesis (blocks[i] has height i). */
export function activeSetAt(blocks: readonly Block[], height: number): readonly string[] {
  const first = blocks[0];
  if (first === undefined) throw new RangeError('empty chain');
  const timeline = createValidatorTimeline(first);
  for (let h = 1; h < height; h++) {
    const b = blocks[h];
    if (b === undefined) throw new RangeError(`missing block ${h}`);
    timeline.append(b);
  }
  return timeline.at(height);
}

/** Node role at a height: validator when its key is in the active set, otherwise a passive follower. */
export type NodeRole = 'validator' | 'follower';

export function roleAt(validators: readonly string[], self: string): NodeRole {
  return validators.includes(self) ? 'validator' : 'follower';
}

/** What a finalized block did to this node's role, or null when nothing changed. */
export type RoleChange = 'became-validator' | 'became-follower' | null;

/**
 * Compare the role before and after a block: `before` = set active at the block's height,
 * `after` = set active at the next height (timeline.at(h) and timeline.at(h + 1)).
 * @example if (roleChange(t.at(h), t.at(h + 1), self) === 'became-follower') stopEngine()
 */
export function roleChange(before: readonly string[], after: readonly string[], self: string): RoleChange {
  const was = before.includes(self);
  const is = after.includes(self);
  if (was === is) return null;
  return is ? 'became-validator' : 'became-follower';
}
