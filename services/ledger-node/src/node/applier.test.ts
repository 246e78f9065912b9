// The block applier on a real chain state (blocks in memory) and mempool: the steps in their order (stored,
// mempool pruned, listeners, then the driver for a block it did not finalize), block receipt's answers, and a
// failing listener that does not stop the others.
import {
  type Block,
  blockHash,
  buildBlock,
  buildGenesis,
  membershipPointerAfter,
  sealBytes,
} from '@scriptorium/ledger-protocol';
import { createSigner, keyPairFromSeed } from '@scriptorium/ledger-protocol/keys';
import { describe, expect, it } from 'vitest';
import { Mempool } from '../mempool/index.ts';
import type { BlockStorage } from '../storage/index.ts';
import { BlockApplier } from './applier.ts';
import { ChainState } from './chain-state.ts';

const signers = [1, 2, 3, 4].map((i) => createSigner(keyPairFromSeed(new Uint8Array(32).fill(i)).privateKey));
const genesis = buildGenesis(
  signers.map((s) => s.publicKey),
  'applier',
);

function sealed(parent: Block, records: Array<{ id: string }> = []): Block {
  const b = buildBlock({
    chainId: 'applier',
    height: parent.header.height + 1,
    parentHash: blockHash(parent.header),
    prevMembershipHeight: membershipPointerAfter(parent.header),
    proposer: signers[0]?.publicKey as string,
    timestamp: parent.header.timestamp + 1,
    records: records.map((r) => ({ ...r, entity: 'urn:e:1', value: 1 })),
    changes: [],
  });
  const hash = blockHash(b.header);
  const seals = signers.slice(0, 3).map((s) => ({
    validator: s.publicKey,
    round: 0,
    signature: s.sign(sealBytes('applier', b.header.height, 0, hash)),
  }));
  return { ...b, commit_signatures: seals };
}

function harness() {
  const blocks: Block[] = [];
  const store: BlockStorage<Block> = {
    get length() {
      return blocks.length;
    },
    get: (h) => blocks[h],
    append: (h, b) => {
      events.push(`store ${h}`);
      blocks[h] = b;
    },
    close() {},
  };
  const events: string[] = [];
  const chain = ChainState.open(store, genesis);
  events.length = 0;
  const mempool = new Mempool({ maxRecords: 10, isCommitted: (id) => chain.isCommitted(id) });
  const noop = { set() {}, inc() {}, observe() {} };
  const errors: unknown[] = [];
  const applier = new BlockApplier({
    self: signers[0]?.publicKey as string,
    chain,
    mempool,
    metrics: { height: noop, isValidator: noop, recordsFinalized: noop, mempoolSize: noop, finalityLatency: noop },
    log: { debug() {}, info() {}, warn() {}, error: (obj) => errors.push(obj) },
    onExternalCommit: () => events.push(`driver ${chain.height} mempool ${mempool.size}`),
    onBehind: () => events.push('behind'),
  });
  return { chain, mempool, applier, events, errors };
}

describe('BlockApplier', () => {
  it('stores, prunes the mempool, hands off, then moves the driver on (not for its own blocks)', () => {
    const t = harness();
    t.mempool.add([{ id: 'r1', entity: 'urn:e:1', value: 1 }]);
    t.applier.onFinalized((b, origin) =>
      t.events.push(`listener ${b.header.height} ${origin} stored ${t.chain.height}`),
    );
    const b1 = sealed(genesis, [{ id: 'r1' }]);
    t.applier.apply(b1, 'consensus');
    expect(t.events).toEqual(['store 1', 'listener 1 consensus stored 1']);
    expect(t.mempool.size).toBe(0);
    expect(t.chain.isCommitted('r1')).toBe(true);
    t.events.length = 0;
    expect(t.applier.receive(sealed(b1), 'push')).toEqual({ height: 2, status: 'applied' });
    expect(t.events).toEqual(['store 2', 'listener 2 push stored 2', 'driver 2 mempool 0']);
  });

  it('block receipt: known, ahead (sync asked), refused with the reason, malformed', () => {
    const t = harness();
    const b1 = sealed(genesis);
    const b2 = sealed(b1);
    expect(t.applier.receive(b2, 'pull')).toEqual({ height: 2, status: 'ahead' });
    expect(t.events).toEqual(['behind']);
    const unsealed = { ...b1, commit_signatures: [] };
    expect(t.applier.receive(unsealed, 'push')).toMatchObject({ height: 1, status: 'refused' });
    expect(t.applier.receive(b1, 'pull')).toEqual({ height: 1, status: 'applied' });
    expect(t.applier.receive(b1, 'push')).toEqual({ height: 1, status: 'known' });
    expect(t.applier.receive({ header: {} }, 'push')).toMatchObject({ height: -1, status: 'refused' });
    expect(t.chain.height).toBe(1);
  });

  it('a failing listener is logged and does not stop the others', () => {
    const t = harness();
    const seen: number[] = [];
    t.applier.onFinalized(() => {
      throw new Error('listener down');
    });
    t.applier.onFinalized((b) => seen.push(b.header.height));
    t.applier.apply(sealed(genesis), 'consensus');
    expect(seen).toEqual([1]);
    expect(t.errors).toHaveLength(1);
  });
});
