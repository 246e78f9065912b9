// The driver on its production ports (the block store and the consensus state log on disk, the system clock
// and timers), with a network port that records what leaves: every own message is in the fsynced state log
// before it is handed to the network, and after a restart the driver re-sends the same votes (never a
// different value for the same height and round). Refusals reach the metric and the debug log.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Block,
  buildGenesis,
  type ConsensusMessage,
  messageSigningBytes,
  verifySignature,
} from '@scriptorium/ledger-protocol';
import { createSigner, generateKeyPair, type KeyPair } from '@scriptorium/ledger-protocol/keys';
import { afterAll, describe, expect, it } from 'vitest';
import type { PersistedState } from '../consensus/index.ts';
import { Mempool } from '../mempool/index.ts';
import { createMetrics } from '../metrics.ts';
import { BlockStore, StateStore } from '../storage/index.ts';
import { ChainState } from './chain-state.ts';
import { type ConsensusDriver, createDriver } from './driver.ts';
import { systemClock, systemTimers } from './system-ports.ts';

const dir = mkdtempSync(join(tmpdir(), 'ledger-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pair = [generateKeyPair(), generateKeyPair()].sort((a, b) => a.publicKey.localeCompare(b.publicKey));
const self = pair[0] as KeyPair; // first in the sorted set: proposer of height 1, round 0
const other = pair[1] as KeyPair;
const genesis = buildGenesis([self.publicKey, other.publicKey], 'driver-test', 1);

interface Sent {
  msg: ConsensusMessage;
  to: string[];
  persisted: PersistedState | undefined;
}

/** Timers on a clock the test moves by hand. */
function manualTime(start = 1_000_000) {
  let now = start;
  const pending: Array<{ at: number; fn: () => void; live: boolean }> = [];
  return {
    clock: { now: () => now },
    timers: {
      after(ms: number, fn: () => void) {
        const t = { at: now + ms, fn, live: true };
        pending.push(t);
        return () => {
          t.live = false;
        };
      },
    },
    /** Moves the clock, firing due timers in order. */
    advance(ms: number) {
      const end = now + ms;
      for (;;) {
        const due = pending.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        due.live = false;
        now = due.at;
        due.fn();
      }
      now = end;
    },
  };
}

function makeDriver(dataDir: string, options: { blockDelayMs?: number; time?: ReturnType<typeof manualTime> } = {}) {
  const { store } = BlockStore.open<Block>(dataDir);
  const chain = ChainState.open(store, genesis);
  const mempool = new Mempool({ maxRecords: 100, isCommitted: (id) => chain.isCommitted(id) });
  const metrics = createMetrics();
  const debug: Array<Record<string, unknown>> = [];
  const sent: Sent[] = [];
  const driver: ConsensusDriver = createDriver({
    signer: createSigner(self.privateKey),
    chain,
    mempool,
    verify: verifySignature,
    commit: (block) => {
      chain.append(block);
      mempool.removeCommitted(block.records, block.validator_changes);
    },
    // The other validator never answers: the height never completes, which is what we want to inspect.
    settings: {
      roundTimeoutMs: 60_000,
      blockDelayMs: options.blockDelayMs ?? 0,
      emptyBlockIntervalMs: 0,
      maxBlockRecords: 100,
      maxBlockBytes: 1 << 20,
    },
    metrics,
    log: { debug: (o) => debug.push(o as Record<string, unknown>), info: () => {}, error: () => {} },
    clock: options.time?.clock ?? systemClock,
    timers: options.time?.timers ?? systemTimers,
    stateStore: StateStore.open(dataDir),
    network: {
      // Observe what the driver hands to the network, and what is on disk at that moment.
      broadcast(msg, to) {
        const onDisk = StateStore.open<PersistedState>(dataDir);
        sent.push({ msg, to: [...to], persisted: onDisk.load() });
        onDisk.close();
      },
      pushBlock() {},
    },
  });
  const stop = () => {
    driver.stop();
    chain.close();
  };
  return { driver, mempool, metrics, debug, sent, stop };
}

describe('driver', () => {
  it('persists each own vote before sending it, and re-sends the same votes after a restart', () => {
    const dataDir = join(dir, 'restart');
    const first = makeDriver(dataDir);
    first.driver.start();
    // An idle proposer waits for work; records arriving wake it at once.
    expect(first.sent).toEqual([]);
    first.mempool.add([{ id: 'r-1', value: 1 }]);
    first.driver.onMempool();
    const types = first.sent.map((s) => s.msg.type);
    expect(types).toEqual(['PRE-PREPARE', 'PREPARE']);
    for (const { msg, to, persisted } of first.sent) {
      expect(to.sort()).toEqual([self.publicKey, other.publicKey].sort());
      expect(persisted?.height).toBe(1);
      const mine = msg.type === 'PRE-PREPARE' ? persisted?.sent.proposal : persisted?.sent.prepare;
      expect(mine, `${msg.type} was not persisted before sending`).toEqual(msg);
    }
    const [proposal, prepare] = first.sent.map((s) => s.msg);
    first.stop();

    // Restart on the same data dir with a different mempool: the node must not propose anything new.
    const second = makeDriver(dataDir);
    second.mempool.add([{ id: 'r-2', value: 2 }]);
    second.driver.start();
    second.driver.onMempool();
    expect(second.sent.map((s) => s.msg)).toEqual([proposal, prepare]);
    second.stop();
  });

  it('batches: records arriving within the block delay (NODE_CONSENSUS__BLOCK_DELAY_MS) of the first share one block', () => {
    const time = manualTime();
    const d = makeDriver(join(dir, 'batching'), { blockDelayMs: 200, time });
    d.driver.start();
    const proposals = () =>
      d.sent
        .filter((s) => s.msg.type === 'PRE-PREPARE')
        .map((s) => s.msg as Extract<ConsensusMessage, { type: 'PRE-PREPARE' }>);
    d.mempool.add([{ id: 'b-1', value: 1 }]);
    d.driver.onMempool();
    time.advance(150);
    expect(proposals(), 'proposed before the block delay had passed').toEqual([]);
    d.mempool.add([{ id: 'b-2', value: 2 }]);
    d.driver.onMempool(); // does not restart the delay, nor cut it short
    time.advance(49);
    expect(proposals()).toEqual([]);
    time.advance(1);
    expect(proposals().map((p) => p.block.records.map((r) => r.id))).toEqual([['b-1', 'b-2']]);
    d.stop();
  });

  it('block delay 0: records are proposed the moment they arrive', () => {
    const time = manualTime();
    const d = makeDriver(join(dir, 'no-batching'), { time });
    d.driver.start();
    d.mempool.add([{ id: 'n-1', value: 1 }]);
    d.driver.onMempool();
    expect(d.sent.map((s) => s.msg.type)).toEqual(['PRE-PREPARE', 'PREPARE']);
    d.stop();
  });

  it('refusals reach rejected_messages_total{reason} and a debug line, at the door and inside the engine', async () => {
    const d = makeDriver(join(dir, 'refusals'));
    d.driver.start();
    expect(d.driver.admit({ type: 'PREPARE' })).toMatchObject({ ok: false, reason: 'malformed' });
    const u = {
      type: 'PREPARE' as const,
      chain_id: 'driver-test',
      height: 1,
      round: 0,
      author: other.publicKey,
      block_hash: 'a'.repeat(64),
    };
    const prepare = { ...u, signature: createSigner(other.privateKey).sign(messageSigningBytes(u)) };
    expect(d.driver.admit({ ...prepare, round: 1 })).toMatchObject({ ok: false, reason: 'bad_signature' });
    const admitted = d.driver.admit(prepare);
    if (!admitted.ok) throw new Error(admitted.detail);
    d.driver.onMessage(admitted.msg);
    d.driver.onMessage(admitted.msg); // the same vote again
    const text = await d.metrics.registry.metrics();
    for (const reason of ['malformed', 'bad_signature', 'duplicate'])
      expect(text).toContain(`scriptorium_ledger_rejected_messages_total{reason="${reason}"} 1`);
    expect(d.debug.map((e) => e.reason)).toEqual(['malformed', 'bad_signature', 'duplicate']);
    expect(d.debug[2]).toMatchObject({ type: 'PREPARE', height: 1, round: 0 });
    d.stop();
  });
});
