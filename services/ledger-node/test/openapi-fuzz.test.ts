// The node's HTTP API under an OpenAPI-driven fuzzer: schemathesis reads GET /openapi.json and sends what it
// describes, valid and invalid, with the cluster token, to a running one-validator node with a few blocks. Every
// answer must be a status the document declares for the operation, with its body schema; never a 5xx; a method a
// path does not have is 405 with Allow. Fixed seed, bounded examples.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { genesisFileContent } from '@scriptorium/ledger-protocol';
import { generateKeyPair } from '@scriptorium/ledger-protocol/keys';
import { fuzz } from '@scriptorium/test-support';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { type RunningNode, startNode } from '../src/server.ts';
import { records, sleep } from './helpers.ts';

const TOKEN = 'fuzz-cluster-token-0123456789abcdef';
let dir: string;
let running: RunningNode;
let base: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ledger-fuzz-'));
  const keys = generateKeyPair();
  writeFileSync(join(dir, 'key.json'), JSON.stringify({ public_key: keys.publicKey, private_key: keys.privateKey }));
  writeFileSync(join(dir, 'genesis.json'), genesisFileContent([keys.publicKey], 'fuzz-chain', 1));
  const config = loadConfig({
    NODE_ID: 'fuzz-node',
    NODE_CLUSTER_TOKEN: TOKEN,
    NODE_DEBUG_API: 'true',
    NODE_DATA_DIR: join(dir, 'data'),
    NODE_KEY_FILE: join(dir, 'key.json'),
    NODE_GENESIS_FILE: join(dir, 'genesis.json'),
    NODE_CONSENSUS__BIND_HOST: '127.0.0.1',
    NODE_CONSENSUS__BIND_PORT: '0',
  });
  running = await startNode(config, pino({ level: 'silent' }));
  base = `http://127.0.0.1:${(running.app.server.address() as AddressInfo).port}`;
  // A few blocks, so that blocks, proofs and evidence exist to be read.
  const res = await fetch(`${base}/mempool`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ records: records('fuzz', 5) }),
  });
  expect(res.status).toBe(200);
  for (let i = 0; i < 100 && running.node.chain.height < 1; i++) await sleep(100);
  expect(running.node.chain.height).toBeGreaterThanOrEqual(1);
});

afterAll(async () => {
  await running?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the node API under schemathesis', () => {
  it('answers only what its OpenAPI document declares', { timeout: 120_000 }, async () => {
    const result = await fuzz({
      schemaUrl: `${base}/openapi.json`,
      baseUrl: base,
      headers: { authorization: `Bearer ${TOKEN}` },
      maxExamples: 25,
      // The console page: HTML, and 503 by design where the console is not built (make web builds it). A validator
      // change would add a random key to the one-node set, which then cannot reach a quorum. A checkpoint signature
      // for a size the node has not reached waits 2 s for it, by design: the run would spend its time waiting.
      excludeOperationIds: ['console', 'adminValidator', 'checkpointSign'],
    });
    console.log(`schemathesis: ${result.summary}`);
    expect(result.ok, result.output).toBe(true);
  });
});
