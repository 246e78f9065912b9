/**
 * Deterministic simulation of a ledger cluster (TigerBeetle VOPR style). One seed drives node count,
 * network faults (loss, duplication, reordering, partitions that heal), crashes with restart from
 * simulated storage, Byzantine twins (two nodes holding one key) and membership changes. Two phases:
 * faults on (safety must hold), then healed (progress must resume). Checkers run outside the system.
 */

import type { Block, ConsensusMessage } from '@scriptorium/ledger-protocol';
import { buildGenesis, maxFaulty, quorumSize, verifySignature } from '@scriptorium/ledger-protocol';
import { createSigner, keyPairFromSeed, type Signer } from '@scriptorium/ledger-protocol/keys';
import { cachedVerify } from '../src/consensus/index.ts';
import {
  checkLiveness,
  checkProofs,
  checkSafety,
  checkSeals,
  EquivocationChecker,
  HandOffChecker,
} from './checkers/index.ts';
import { SimClock } from './clock.ts';
import { HEALED, type NetworkConditions, SimNetwork } from './network.ts';
import { type ApplierFactory, type CrashPoint, type Payload, SimNode, type SimParams } from './node.ts';
import { Prng } from './prng.ts';

export interface Scenario {
  validators: number;
  twins: number;
  spare: boolean;
  faults: NetworkConditions;
  faultPhaseMs: number;
  partitions: Array<{ at: number; duration: number; groups: number[][] }>;
  /**
   * A crash at `at` (point null: at once), or armed at `at` to happen at the I/O point `point`; of `node`, or,
   * with `proposer`, of the honest node that proposes the next height at round 0 then (proposers are where a
   * vote sent but not persisted would turn into equivocation after a restart).
   */
  crashes: Array<{ node: number; proposer: boolean; at: number; downtime: number; point: CrashPoint | null }>;
  /** Windows in which COMMITs and blocks sent to `victims` are dropped: others decide, victims must round-change. */
  commitBlackouts: Array<{ at: number; duration: number; victims: number[] }>;
  addAt: number | null;
  removeAt: number | null;
}

export interface SimResult {
  seed: number;
  ok: boolean;
  errors: string[];
  scenario: Scenario;
  stats: {
    heightAtHeal: number;
    /** Refusals counted by the nodes' drivers, by reason. */
    rejected: Record<string, number>;
    /** Armed crash points reached, by kind. */
    crashPointsHit: Record<string, number>;
    /** Simulated time from healing until every honest node reached the target height. */
    recoveryMs: number;
    finalHeights: number[];
    maxRound: number;
    messagesSent: number;
    events: number;
    simTimeMs: number;
    membershipChanges: number;
    /** Size of the active set after the last block of the first honest node. */
    finalActiveSetSize: number;
    /** Height of the block whose ADD made the spare node a validator, and whether it sealed later blocks. */
    addedAt: number | null;
    addedNodeSealed: boolean;
    /** Height of the block that removed a validator. */
    removedAt: number | null;
  };
  log: string[];
}

export interface RunOptions {
  verbose?: boolean;
  /** Heights every honest node must gain after healing. */
  progressAfterHeal?: number;
  /** Simulated time allowed for the healed phase. */
  healBudgetMs?: number;
  /** Given every honest node's final chain (read-only), after the checkers ran. */
  inspect?: (chains: ReadonlyMap<string, readonly Block[]>) => void;
  /** The block applier every node runs (default: production's); a test plants a bug here. */
  applier?: ApplierFactory;
}

const PARAMS: SimParams = {
  chainId: 'sim',
  driver: {
    roundTimeoutMs: 400,
    maxTimeoutMs: 400 * 2 ** 4,
    // The proposer batches for 100 ms; an idle one proposes an empty block 100 ms after the height opened
    // (some seeds: 60 s, so idle nodes run no round timers and only work moves the chain).
    blockDelayMs: 100,
    emptyBlockIntervalMs: 100,
    maxBlockRecords: 4,
    maxBlockBytes: 1 << 20,
  },
  syncIntervalMs: 150,
  byzantineMutation: 0.3,
};
const MAX_EVENTS = 3_000_000;

/** The scenario a seed stands for (pure function of the seed). */
export function scenarioFor(seed: number): Scenario {
  const rng = new Prng(seed ^ 0x5eed);
  const validators = rng.int(4, 10);
  const f = maxFaulty(validators);
  const twins = rng.chance(0.4) ? rng.int(1, Math.min(2, f)) : 0;
  const faultPhaseMs = rng.int(1200, 2500);
  const faults: NetworkConditions = {
    loss: rng.chance(0.75) ? rng.float() * (rng.chance(0.3) ? 0.45 : 0.2) : 0,
    duplicate: rng.chance(0.5) ? rng.float() * 0.2 : 0,
    minDelayMs: 1,
    maxDelayMs: rng.chance(0.3) ? rng.int(100, 300) : rng.int(5, 60),
    partition: null,
  };
  const total = validators + twins + 1; // ids: validators, then twins, then the spare follower
  const honestIds = Array.from({ length: validators }, (_, i) => i).filter((i) => i >= twins);
  const partitions: Scenario['partitions'] = [];
  const nParts = rng.chance(0.7) ? rng.int(1, 4) : 0;
  for (let i = 0; i < nParts; i++) {
    const groups: number[][] = [[], []];
    if (rng.chance(0.5)) {
      // Isolate a few nodes (often one that just decided) from the rest.
      const k = rng.int(1, Math.max(1, Math.floor(total / 3)));
      const isolated = new Set<number>();
      while (isolated.size < k) isolated.add(rng.int(0, total - 1));
      for (let id = 0; id < total; id++) (groups[isolated.has(id) ? 0 : 1] as number[]).push(id);
    } else {
      for (let id = 0; id < total; id++) (groups[rng.int(0, 1)] as number[]).push(id);
    }
    partitions.push({ at: rng.int(0, faultPhaseMs - 200), duration: rng.int(100, 1200), groups });
  }
  const crashes: Scenario['crashes'] = [];
  // Many quick crash-restarts stress the persistence rule (a restarted node must not sign twice).
  const nCrash = rng.chance(0.6) ? rng.int(1, rng.chance(0.3) ? 12 : 3) : 0;
  for (let i = 0; i < nCrash; i++) {
    crashes.push({
      node: rng.pick(honestIds),
      proposer: rng.chance(0.5),
      at: rng.int(0, faultPhaseMs - 100),
      downtime: rng.chance(0.5) ? rng.int(1, 30) : rng.int(50, 1500),
      point: crashPoint(rng),
    });
  }
  const commitBlackouts: Scenario['commitBlackouts'] = [];
  const nBlackouts = rng.chance(0.5) ? rng.int(1, 3) : 0;
  for (let i = 0; i < nBlackouts; i++) {
    const size = quorumSize(validators);
    const victims = new Set<number>();
    while (victims.size < size) victims.add(rng.int(0, validators - 1));
    commitBlackouts.push({ at: rng.int(0, faultPhaseMs - 300), duration: rng.int(200, 1500), victims: [...victims] });
  }
  const spare = rng.chance(0.5);
  const addAt = spare && rng.chance(0.8) ? rng.int(0, faultPhaseMs) : null;
  // A REMOVE must leave at most f Byzantine keys among the remaining validators.
  const removeAt = twins <= maxFaulty(validators - 1) && rng.chance(0.35) ? rng.int(0, faultPhaseMs) : null;
  return { validators, twins, spare, faults, faultPhaseMs, partitions, crashes, commitBlackouts, addAt, removeAt };
}

/** Where an armed crash hits: at once, at the k-th I/O, or between a persist and a send (either order). */
function crashPoint(rng: Prng): CrashPoint | null {
  const p = rng.float();
  if (p < 0.3) return null;
  if (p < 0.55) return { kind: 'ops', after: rng.int(0, 4) };
  if (p < 0.75) return { kind: 'persist-then-send', skip: rng.int(0, 1) };
  return { kind: 'send-then-persist', skip: rng.int(0, 1) };
}

/** Runs one seed; never throws for a protocol failure (it is reported in `errors`). */
export function runSeed(seed: number, options: RunOptions = {}): SimResult {
  const scenario = scenarioFor(seed);
  const rng = new Prng(seed);
  const clock = new SimClock();
  const log: string[] = [];
  const logFn = options.verbose ? (line: string) => log.push(line) : undefined;

  // Keys: validators 0..V-1 in genesis; the first `twins` keys are also held by an extra node each.
  const keyRng = rng.fork();
  const signer = (): Signer => {
    const seedBytes = new Uint8Array(32);
    for (let i = 0; i < 32; i += 4) new DataView(seedBytes.buffer).setUint32(i, keyRng.u32());
    return createSigner(keyPairFromSeed(seedBytes).privateKey);
  };
  const validatorSigners = Array.from({ length: scenario.validators }, signer);
  const spareSigner = signer();
  const genesis = buildGenesis(
    validatorSigners.map((s) => s.publicKey),
    PARAMS.chainId,
  );

  // The node's signature cache (consensus/verify-cache.ts, its default bound: a seed signs a few hundred
  // messages), one for the whole run, shared by every node: still real Ed25519, each distinct signature
  // checked once, not once per node.
  const verify = cachedVerify(verifySignature);

  const nodes: SimNode[] = [];
  const netRng = rng.fork();
  const network = new SimNetwork<Payload>(clock, netRng, (to, from, payload) => nodes[to]?.receive(from, payload));
  const equivocation = new EquivocationChecker();
  const handOff = new HandOffChecker();
  const rejected: Record<string, number> = {};
  const crashPointsHit: Record<string, number> = {};
  const env = {
    clock,
    network,
    rng: rng.fork(),
    // Every third seed: an idle chain makes no empty blocks within the run (interval 60 s), so only work
    // moves it and idle round timers must stay quiet without costing liveness.
    params: seed % 3 === 0 ? { ...PARAMS, driver: { ...PARAMS.driver, emptyBlockIntervalMs: 60_000 } } : PARAMS,
    verify,
    nodes: () => nodes,
    log: logFn,
    onBroadcast: (node: SimNode, msg: ConsensusMessage) => {
      if (node.honest) equivocation.observe(`n${node.id}`, msg);
    },
    onReject: (reason: string) => {
      rejected[reason] = (rejected[reason] ?? 0) + 1;
    },
    onCrashPoint: (kind: string) => {
      crashPointsHit[kind] = (crashPointsHit[kind] ?? 0) + 1;
    },
    onBoot: (node: SimNode, height: number) => {
      if (node.honest) handOff.boot(`n${node.id}`, height);
    },
    onFinalized: (node: SimNode, block: Block) => {
      if (node.honest) handOff.observe(`n${node.id}`, block, node.blocks);
    },
    applier: options.applier,
  };
  const byzantineKeys = new Set(validatorSigners.slice(0, scenario.twins).map((s) => s.publicKey));
  for (let i = 0; i < scenario.validators; i++) {
    const s = validatorSigners[i] as Signer;
    nodes.push(new SimNode(i, s, !byzantineKeys.has(s.publicKey), genesis, env));
  }
  for (let t = 0; t < scenario.twins; t++) {
    nodes.push(new SimNode(nodes.length, validatorSigners[t] as Signer, false, genesis, env));
  }
  const spareNode = scenario.spare ? new SimNode(nodes.length, spareSigner, true, genesis, env) : null;
  if (spareNode) nodes.push(spareNode);

  // ---------------------------------------------------------------- phase 1: faults on
  network.conditions = scenario.faults;
  for (const p of scenario.partitions) {
    const groups = p.groups.map((g) => g.filter((id) => id < nodes.length));
    clock.schedule(p.at, () => {
      logFn?.(`[t=${clock.now}] partition ${JSON.stringify(groups)}`);
      network.conditions = { ...network.conditions, partition: groups };
    });
    clock.schedule(p.at + p.duration, () => {
      logFn?.(`[t=${clock.now}] partition healed`);
      network.conditions = { ...network.conditions, partition: null };
    });
  }
  for (const c of scenario.crashes) {
    let node = nodes[c.node] as SimNode;
    clock.schedule(c.at, () => {
      if (c.proposer) node = nodes.find((n) => n.honest && n.alive && n.proposesNext()) ?? node;
      if (c.point === null) node.crash();
      else node.crashPoint = { ...c.point };
    });
    clock.schedule(c.at + c.downtime, () => node.restart());
  }
  const blackouts = new Set<number>();
  const inBlackout = new Map<number, number>();
  scenario.commitBlackouts.forEach((b, i) => {
    clock.schedule(b.at, () => {
      logFn?.(`[t=${clock.now}] COMMIT/block blackout for ${JSON.stringify(b.victims)} (${b.duration} ms)`);
      blackouts.add(i);
      for (const v of b.victims) inBlackout.set(v, (inBlackout.get(v) ?? 0) + 1);
    });
    clock.schedule(b.at + b.duration, () => {
      blackouts.delete(i);
      for (const v of b.victims) inBlackout.set(v, (inBlackout.get(v) ?? 1) - 1);
    });
  });
  network.dropIf = (_from, to, payload) =>
    (inBlackout.get(to) ?? 0) > 0 &&
    (payload.kind === 'block' ||
      payload.kind === 'block-reply' ||
      (payload.kind === 'consensus' && payload.msg.type === 'COMMIT'));
  let membershipChanges = 0;
  const honestValidatorNode = () => nodes.find((n) => n.honest && n.alive && n.isValidator);
  if (scenario.addAt !== null && spareNode) {
    clock.schedule(scenario.addAt, () => {
      membershipChanges++;
      honestValidatorNode()?.submitChange({ action: 'ADD', validator: spareNode.signer.publicKey });
    });
  }
  if (scenario.removeAt !== null) {
    const victim = nodes.find((n) => n.honest && n.id === scenario.validators - 1) ?? null;
    if (victim) {
      clock.schedule(scenario.removeAt, () => {
        membershipChanges++;
        honestValidatorNode()?.submitChange({ action: 'REMOVE', validator: victim.signer.publicKey });
      });
    }
  }
  // Workload: observations arrive at random nodes.
  const workRng = rng.fork();
  let recordSeq = 0;
  const work = () => {
    const n = workRng.pick(nodes);
    n.observe([{ id: `rec-${seed}-${recordSeq++}`, entity: `urn:e:${workRng.int(1, 5)}`, value: workRng.int(0, 99) }]);
    clock.schedule(workRng.int(40, 160), work);
  };
  clock.schedule(0, work);

  const errors: string[] = [];
  const honest = nodes.filter((n) => n.honest);
  const chains = () => new Map(honest.map((n) => [`n${n.id}`, n.blocks]));
  const budgetOk = clock.runUntil(scenario.faultPhaseMs, MAX_EVENTS);
  if (!budgetOk) errors.push('event budget exhausted in the fault phase');
  errors.push(...checkSafety(chains()));

  // ---------------------------------------------------------------- phase 2: healed
  logFn?.(`[t=${clock.now}] ---- healed: network perfect, every node restarted ----`);
  network.conditions = HEALED;
  network.dropIf = null;
  for (const n of nodes) {
    n.crashPoint = null;
    n.restart();
  }
  const heightAtHeal = Math.max(...honest.map((n) => n.height));
  const target = heightAtHeal + (options.progressAfterHeal ?? 2);
  const healedAt = clock.now;
  const deadline = clock.now + (options.healBudgetMs ?? 30_000);
  while (clock.now < deadline && honest.some((n) => n.height < target)) {
    if (!clock.runUntil(clock.now + 100, MAX_EVENTS)) {
      errors.push('event budget exhausted in the healed phase');
      break;
    }
  }
  const final = chains();
  errors.push(
    ...checkSafety(final),
    ...checkSeals(final, verify),
    ...checkProofs(final),
    ...checkLiveness(final, target),
    ...equivocation.errors,
    ...handOff.finish(new Map(honest.map((n) => [`n${n.id}`, n.height]))),
  );
  options.inspect?.(final);
  // Membership: find the blocks that applied an ADD / REMOVE on the first honest chain.
  const reference = honest[0]?.blocks ?? [];
  const changeHeight = (action: 'ADD' | 'REMOVE') =>
    reference.find((b) => b.header.height > 0 && b.validator_changes.some((c) => c.action === action))?.header.height ??
    null;
  const addedAt = changeHeight('ADD');
  const removedAt = changeHeight('REMOVE');
  const addedNodeSealed =
    spareNode !== null &&
    reference.some((b) => b.commit_signatures.some((s) => s.validator === spareNode.signer.publicKey));
  const unique = [...new Set(errors)];
  return {
    seed,
    ok: unique.length === 0,
    errors: unique,
    scenario,
    stats: {
      rejected,
      crashPointsHit,
      heightAtHeal,
      recoveryMs: clock.now - healedAt,
      finalHeights: nodes.map((n) => n.height),
      maxRound: Math.max(...nodes.map((n) => n.maxRound)),
      messagesSent: network.sent,
      events: clock.executed,
      simTimeMs: clock.now,
      membershipChanges,
      finalActiveSetSize: honest[0]?.activeSetAfterTip().length ?? 0,
      addedAt,
      addedNodeSealed,
      removedAt,
    },
    log,
  };
}

/** The line printed for a failing seed. */
export function replayLine(seed: number): string {
  return `replay: npm run sim -w @scriptorium/ledger-node -- --seed=${seed}`;
}
