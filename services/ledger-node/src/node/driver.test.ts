// The driver's persistence rule on a real node object: every own message is in the fsynced state
// log before it is handed to the network, and after a restart the node re-sends the same votes
// (never a different value for the same height and round).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildGenesis } from '@scriptorium/ledger-protocol';
import { generateKeyPair, type KeyPair } from '@scriptorium/ledger-protocol/keys';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import type { PersistedState } from '../consensus/index.ts';
import { createMetrics } from '../metrics.ts';
import { StateStore } from '../storage/index.ts';
import { createDriver } from './driver.ts';
import { LedgerNode } from './node.ts';

const dir = mkdtempSync(join(tmpdir(), 'ledger-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pair = [generateKeyPair(), generateKeyPair()].sort((a, b) => a.publicKey.localeCompare(b.publicKey));
const self = pair[0] as KeyPair; // first in the sorted set: proposer of height 1, round 0
const other = pair[1] as KeyPair;
const genesis = buildGenesis([self.publicKey, other.publicKey], 'driver-test', 1);

function makeNode(): {
  node: LedgerNode;
  sent: Array<{ msg: Record<string, unknown>; persisted: PersistedState | undefined }>;
} {
  writeFileSync(join(dir, 'key.json'), JSON.stringify({ public_key: self.publicKey, private_key: self.privateKey }));
  const config = loadConfig({
    NODE_DATA_DIR: join(dir, 'data'),
    NODE_KEY_FILE: join(dir, 'key.json'),
    // The other validator is unreachable: the height never completes, which is what we want to inspect.
    NODE_PEERS: `other@127.0.0.1:9|${other.publicKey}`,
    NODE_CONSENSUS__ROUND_TIMEOUT_MS: '60000',
  });
  const node = new LedgerNode({
    config,
    keys: self,
    genesis,
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(),
  });
  const sent: Array<{ msg: Record<string, unknown>; persisted: PersistedState | undefined }> = [];
  // Observe what the driver hands to the network, and what is on disk at that moment.
  node.consensusGossip.sendRaw = (path: string, json: string) => {
    if (path !== '/consensus') return;
    const onDisk = StateStore.open<PersistedState>(join(dir, 'data'));
    sent.push({ msg: JSON.parse(json), persisted: onDisk.load() });
    onDisk.close();
  };
  node.driver = createDriver(node);
  return { node, sent };
}

describe('driver', () => {
  it('persists each own vote before sending it, and re-sends the same votes after a restart', async () => {
    const first = makeNode();
    first.node.driver?.start();
    first.node.addRecords([{ id: 'r-1', value: 1 }]);
    await new Promise((r) => setTimeout(r, 50));
    const types = first.sent.map((s) => s.msg.type);
    expect(types).toContain('PRE-PREPARE');
    expect(types).toContain('PREPARE');
    for (const { msg, persisted } of first.sent) {
      expect(persisted?.height).toBe(1);
      const mine =
        msg.type === 'PRE-PREPARE'
          ? persisted?.sent.proposal
          : msg.type === 'PREPARE'
            ? persisted?.sent.prepare
            : undefined;
      expect(mine, `${msg.type} was not persisted before sending`).toEqual(msg);
    }
    const proposal = first.sent.find((s) => s.msg.type === 'PRE-PREPARE')?.msg;
    const prepare = first.sent.find((s) => s.msg.type === 'PREPARE')?.msg;
    await first.node.stop();

    // Restart on the same data dir with a different mempool: the node must not propose anything new.
    const second = makeNode();
    second.node.addRecords([{ id: 'r-2', value: 2 }]);
    second.node.driver?.start();
    await new Promise((r) => setTimeout(r, 50));
    const resent = second.sent.filter((s) => s.msg.height === 1 && s.msg.round === 0);
    expect(resent.map((s) => s.msg.type)).toContain('PREPARE');
    for (const { msg } of resent) {
      if (msg.height !== 1 || msg.round !== 0) continue;
      if (msg.type === 'PRE-PREPARE') expect(msg).toEqual(proposal);
      if (msg.type === 'PREPARE') expect(msg).toEqual(prepare);
    }
    await second.node.stop();
  });
});
