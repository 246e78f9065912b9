/**
 * Micro-benchmarks of the ledger's pure core: Merkle proofs verified/s, Ed25519 signatures verified/s,
 * consensus engine steps/s. Writes bench/results/ledger-core.json. Run directly
 * (`node bench/ledger/core.ts`) or call `runCoreBench()` from bench/ledger/run.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createEngine, type EngineAction, heightContextAfter } from '@scriptorium/ledger-node/consensus';
import {
  type Block,
  blockHash,
  buildBlock,
  buildGenesis,
  type ConsensusMessage,
  checkBody,
  createValidatorTimeline,
  membershipPointerAfter,
  nobleSha256,
  proofFor,
  verifyProof,
} from '@scriptorium/ledger-protocol';
import { createSigner, keyPairFromSeed, verifySignature } from '@scriptorium/ledger-protocol/keys';

function rate(label: string, minMs: number, fn: () => number): { label: string; perSecond: number; ops: number } {
  let ops = 0;
  const start = performance.now();
  while (performance.now() - start < minMs) ops += fn();
  const secs = (performance.now() - start) / 1000;
  return { label, perSecond: Math.round(ops / secs), ops };
}

function benchProofs(records: number) {
  const block = buildBlock({
    chainId: 'bench',
    height: 1,
    parentHash: '0'.repeat(64),
    prevMembershipHeight: 0,
    proposer: 'a'.repeat(64),
    timestamp: 0,
    records: Array.from({ length: records }, (_, i) => ({
      id: `r${i}`,
      entity: `urn:ngsi:e${i}`,
      attr: 'temp',
      value: i,
    })),
    changes: [],
  });
  const proofs = Array.from({ length: 64 }, (_, i) => proofFor(block, (i * 7) % records));
  let i = 0;
  const native = rate(`merkle proofs verified/s (${records} records, node:crypto sha256)`, 1000, () => {
    const p = proofs[i++ % proofs.length];
    if (!p || !verifyProof(p)) throw new Error('proof failed');
    return 1;
  });
  const noble = rate(`merkle proofs verified/s (${records} records, @noble/hashes, browser path)`, 1000, () => {
    const p = proofs[i++ % proofs.length];
    if (!p || !verifyProof({ ...p, sha256: nobleSha256 })) throw new Error('proof failed');
    return 1;
  });
  const body = rate(
    `records checked/s (checkBody: canonical JSON + Merkle root, ${records}-record block)`,
    1000,
    () => {
      if (!checkBody(block).ok) throw new Error('body check failed');
      return records;
    },
  );
  return [native, noble, body];
}

function benchSignatures() {
  const signer = createSigner(keyPairFromSeed(new Uint8Array(32).fill(3)).privateKey);
  const msg = new TextEncoder().encode(`{"domain":"scriptorium-ledger/v1/PREPARE/bench","height":1,"round":0}`);
  const sig = signer.sign(msg);
  const sign = rate('ed25519 signatures made/s (node:crypto)', 1000, () => {
    signer.sign(msg);
    return 1;
  });
  const verify = rate('ed25519 signatures verified/s (node:crypto, cached KeyObject)', 1000, () => {
    if (!verifySignature(signer.publicKey, msg, sig)) throw new Error('verify failed');
    return 1;
  });
  return [sign, verify];
}

/** A 4-validator cluster with a perfect in-memory network: every step verifies real signatures. */
function benchEngine(validators: number) {
  const signers = Array.from({ length: validators }, (_, i) =>
    createSigner(keyPairFromSeed(new Uint8Array(32).fill(100 + i)).privateKey),
  );
  const genesis = buildGenesis(
    signers.map((s) => s.publicKey),
    'bench',
  );
  const nodes = signers.map((s) => ({
    s,
    engine: createEngine({ chainId: 'bench', self: s.publicKey, sign: s.sign, baseTimeoutMs: 1000 }),
    tip: genesis as Block,
    timeline: createValidatorTimeline(genesis),
  }));
  const queue: Array<{ to: (typeof nodes)[0]; msg: ConsensusMessage }> = [];
  let steps = 0;
  let heights = 0;
  const run = (node: (typeof nodes)[0], actions: EngineAction[]): void => {
    for (const a of actions) {
      if (a.type === 'broadcast') for (const o of nodes) if (o !== node) queue.push({ to: o, msg: a.msg });
      if (a.type === 'persist') JSON.stringify(a.state);
      if (a.type === 'request-proposal') {
        const block = buildBlock({
          chainId: 'bench',
          height: a.height,
          parentHash: blockHash(node.tip.header),
          prevMembershipHeight: membershipPointerAfter(node.tip.header),
          proposer: node.s.publicKey,
          timestamp: a.height,
          records: [{ id: `h${a.height}` }],
          changes: [],
        });
        steps++;
        run(node, node.engine.step({ type: 'proposal-ready', height: a.height, round: a.round, block }));
      }
      if (a.type === 'finalize') {
        if (node === nodes[0]) heights++;
        node.tip = a.block;
        node.timeline.append(a.block);
        steps++;
        run(node, node.engine.step({ type: 'start', ctx: heightContextAfter(a.block, node.timeline) }));
      }
    }
  };
  for (const n of nodes) run(n, n.engine.step({ type: 'start', ctx: heightContextAfter(genesis, n.timeline) }));
  const start = performance.now();
  while (performance.now() - start < 2000 && queue.length > 0) {
    const { to, msg } = queue.shift() as (typeof queue)[0];
    steps++;
    run(to, to.engine.step({ type: 'message', msg }));
  }
  const secs = (performance.now() - start) / 1000;
  return [
    {
      label: `engine steps/s (${validators} validators, real signatures)`,
      perSecond: Math.round(steps / secs),
      ops: steps,
    },
    {
      label: `heights decided/s (${validators} validators, one process)`,
      perSecond: Math.round(heights / secs),
      ops: heights,
    },
  ];
}

export function runCoreBench() {
  const startLoad = loadavg()[0] ?? 0;
  const results = [...benchProofs(1024), ...benchSignatures(), ...benchEngine(4), ...benchEngine(7)];
  for (const r of results) console.log(`${r.label.padEnd(80)} ${r.perSecond.toLocaleString('en-US')}`);
  const out = {
    part: 'ledger-core',
    node: process.version,
    date: new Date().toISOString(),
    cpus: cpus().length,
    /** 1-minute load average when the run started: the build machine is shared, figures drop under load. */
    load_average: Number(startLoad.toFixed(2)),
    results: Object.fromEntries(results.map((r) => [r.label, r.perSecond])),
  };
  const dir = join(import.meta.dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'ledger-core.json'), `${JSON.stringify(out, null, 2)}\n`);
  return out;
}

if (import.meta.main) runCoreBench();
