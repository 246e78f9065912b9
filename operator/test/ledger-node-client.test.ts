// The operator's ledger support against REAL ledger node processes on loopback: certificates from
// createClusterCa/issueNodeCertificate loaded by the nodes' node:tls (server and mutual mode), LedgerNodeClient
// reading /chain and /ready and submitting POST /membership, and planMembership driving a membership change
// end to end — a follower ADDed once caught up, then a validator REMOVEd and its workload deleted only after
// /chain stops listing it. Plus the client against hostile fake servers (bad bodies, huge bodies, hangs).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import { freePort } from '@scriptorium/test-support/ports';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type ChainView,
  createClusterCa,
  issueNodeCertificate,
  LedgerNodeClient,
  LedgerNodeError,
  type MembershipAction,
  type MembershipInput,
  type ObservedMember,
  type PemPair,
  planMembership,
} from '../src/ledger/index.ts';

// Real processes on a shared 2-core machine: generous limits, no timed assertions.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

let dir: string;
let ca: PemPair;
const nodeFiles: { certFile: string; keyFile: string }[] = [];
let operatorCert: PemPair;
const clusters: LocalCluster[] = [];
const clients: LedgerNodeClient[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'operator-ledger-'));
  const now = new Date();
  ca = await createClusterCa({ commonName: 'test ledger cluster CA', now });
  for (let i = 0; i < 5; i++) {
    const pair = await issueNodeCertificate(ca, { commonName: `node-${i}`, dnsNames: ['127.0.0.1', 'localhost'], now });
    const files = { certFile: join(dir, `node-${i}.crt`), keyFile: join(dir, `node-${i}.key`) };
    writeFileSync(files.certFile, pair.certPem);
    writeFileSync(files.keyFile, pair.keyPem, { mode: 0o600 });
    nodeFiles.push(files);
  }
  writeFileSync(join(dir, 'ca.crt'), ca.certPem);
  operatorCert = await issueNodeCertificate(ca, { commonName: 'operator', dnsNames: ['operator.local'], now });
});

afterAll(async () => {
  // Every cleanup runs even when one fails, so no node process outlives the suite.
  const results = await Promise.allSettled([...clients.map((c) => c.close()), ...clusters.map((c) => c.stopAll())]);
  if (dir) rmSync(dir, { recursive: true, force: true });
  for (const c of clusters) rmSync(c.dir, { recursive: true, force: true });
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
});

function tlsFor(mode: 'server' | 'mutual') {
  return {
    mode,
    caFile: join(dir, 'ca.crt'),
    ca: Buffer.from(ca.certPem),
    certFor: (index: number) => nodeFiles[index] as { certFile: string; keyFile: string },
    ...(mode === 'mutual'
      ? { client: { cert: Buffer.from(operatorCert.certPem), key: Buffer.from(operatorCert.keyPem) } }
      : {}),
  };
}

function client(opts: ConstructorParameters<typeof LedgerNodeClient>[0]): LedgerNodeClient {
  const c = new LedgerNodeClient(opts);
  clients.push(c);
  return c;
}

const records = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: `${prefix}-${i}`, entity: `urn:test:${prefix}`, value: i }));

describe('TLS server mode with the operator PKI', () => {
  it('a node loads our certificate; the client verifies it with our CA, refuses it without, and authenticates by token', async () => {
    const cluster = await LocalCluster.create({ size: 1, roundTimeoutMs: 400, tls: tlsFor('server') });
    clusters.push(cluster);
    await cluster.startAll();
    const node = cluster.nodes[0] as LocalNode;
    expect(node.url.startsWith('https://127.0.0.1:')).toBe(true);

    const ok = client({ token: cluster.token, caPem: ca.certPem, timeoutMs: 10_000 });
    const chain = await ok.chain(node.url);
    expect(chain.validators).toEqual([node.keys.publicKey]);
    expect(chain.isValidator).toBe(true);
    expect(chain.quorum).toBe(1);
    expect(await ok.ready(node.url)).toBe(true);
    // By DNS name too (hostname verification against the dNSName SAN, as Service DNS names are in a cluster).
    expect((await ok.chain(node.url.replace('127.0.0.1', 'localhost'))).height).toBeGreaterThanOrEqual(0);
    // Answered with the token; a change with no effect (REMOVE of a key that is not a validator) is not taken.
    expect(await ok.submitMembership(node.url, { action: 'REMOVE', validator: 'f'.repeat(64) })).toEqual({
      accepted: 0,
    });

    const otherCa = await createClusterCa({ commonName: 'someone else', now: new Date() });
    const untrusting = client({ caPem: otherCa.certPem, timeoutMs: 10_000 });
    const refused = await untrusting.chain(node.url).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LedgerNodeError);
    expect((refused as LedgerNodeError).kind).toBe('unreachable');

    const badToken = client({ token: 'not-the-cluster-token', caPem: ca.certPem, timeoutMs: 10_000 });
    const denied = await badToken
      .submitMembership(node.url, { action: 'REMOVE', validator: 'f'.repeat(64) })
      .catch((e: unknown) => e);
    expect(denied).toMatchObject({ kind: 'http', status: 401 });
    expect(String((denied as Error).message)).not.toContain('not-the-cluster-token');
    clusters.splice(clusters.indexOf(cluster), 1);
    await cluster.stopAll(); // free the CPU for the next suite
    rmSync(cluster.dir, { recursive: true, force: true });
  });
});

describe('membership end to end in mutual TLS', () => {
  let cluster: LocalCluster;
  let ledger: LedgerNodeClient;
  const names = new Map<LocalNode, string>();
  const removed = new Set<LocalNode>();

  beforeAll(async () => {
    cluster = await LocalCluster.create({ size: 4, roundTimeoutMs: 400, tls: tlsFor('mutual') });
    clusters.push(cluster);
    await cluster.startAll();
    cluster.nodes.forEach((n, i) => {
      names.set(n, `v${i}`);
    });
    ledger = client({
      token: cluster.token,
      caPem: ca.certPem,
      clientCert: { certPem: operatorCert.certPem, keyPem: operatorCert.keyPem },
      timeoutMs: 10_000,
    });
  });

  /** What the reconciler observes: every running node's readiness and height; the highest node's chain. */
  async function observe(): Promise<{ members: ObservedMember[]; chain: ChainView | undefined }> {
    const running = cluster.nodes.filter((n) => !removed.has(n));
    const seen = await Promise.all(
      running.map(async (n) => {
        const view = await ledger.chain(n.url).catch(() => undefined);
        const ready = await ledger.ready(n.url).catch(() => false);
        return { n, view, ready };
      }),
    );
    let chain: ChainView | undefined;
    for (const s of seen) if (s.view && (!chain || s.view.height > chain.height)) chain = s.view;
    const members = seen.map((s) => ({
      name: names.get(s.n) as string,
      publicKey: s.n.keys.publicKey,
      ready: s.ready,
      height: s.view?.height,
    }));
    return { members, chain };
  }

  /** Runs observe → plan → act until the plan is `none`; returns every decision with the chain it saw. */
  async function reconcileUntilDone(desired: LocalNode[], timeoutMs: number) {
    const log: { action: MembershipAction; chain: ChainView | undefined; members: ObservedMember[] }[] = [];
    let pending: MembershipInput['pending'];
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const { members, chain } = await observe();
      const action = planMembership({
        desired: desired.map((n) => ({ name: names.get(n) as string, publicKey: n.keys.publicKey })),
        members,
        chain,
        pending,
        now: new Date(),
        resubmitAfterMs: 30_000,
      });
      log.push({ action, chain, members });
      if (action.type === 'none') return log;
      if (action.type === 'submit') {
        const via = cluster.nodes.find((n) => names.get(n) === action.via) as LocalNode;
        await ledger.submitMembership(via.url, action.change);
        pending = { change: action.change, via: action.via, submittedAt: new Date() };
      } else if (action.type === 'deleteWorkload') {
        const node = cluster.nodes.find((n) => names.get(n) === action.name) as LocalNode;
        await cluster.stop(node, 'SIGTERM');
        removed.add(node);
      } else {
        // Keep blocks coming so heights move (a real broker watcher does this in production).
        await cluster.post(cluster.nodes[0] as LocalNode, '/mempool', { records: records(`tick-${log.length}`, 2) });
        await new Promise((r) => setTimeout(r, 300));
      }
    }
    throw new Error(`membership did not settle; last decisions ${JSON.stringify(log.slice(-3).map((l) => l.action))}`);
  }

  /**
   * A node's /chain once it holds the block the planner's last decision saw. The planner reads the highest node;
   * the others append the same finalized block a moment later (at load 16, one was still a block behind).
   */
  async function atSettledHeight(node: LocalNode, log: Awaited<ReturnType<typeof reconcileUntilDone>>) {
    const height = log.at(-1)?.chain?.height ?? 0;
    return cluster.waitFor(
      `${names.get(node)} at height ${height}`,
      () => ledger.chain(node.url),
      (v) => v.height >= height,
      30_000,
    );
  }

  it('a 5th node starts as a follower and is ADDed only once ready and caught up', async () => {
    await cluster.post(cluster.nodes[0] as LocalNode, '/mempool', { records: records('before', 20) });
    const fifth = await cluster.addNode();
    names.set(fifth, 'v4');
    await cluster.start(fifth, { NODE_PEERS: (cluster.nodes[0] as LocalNode).peerSpec });
    const log = await reconcileUntilDone(cluster.nodes, 90_000);

    // One change only (a resubmission after the timeout, on a slow machine, is the same change).
    const submits = log.filter((l) => l.action.type === 'submit');
    expect(submits.length).toBeGreaterThanOrEqual(1);
    for (const l of submits)
      expect(l.action).toMatchObject({ change: { action: 'ADD', validator: fifth.keys.publicKey } });
    const atSubmit = submits[0];
    const v4 = atSubmit?.members.find((m) => m.name === 'v4');
    expect(v4?.ready).toBe(true);
    expect(v4?.height).toBeGreaterThanOrEqual((atSubmit?.chain?.height ?? Number.POSITIVE_INFINITY) - 1);
    for (const n of cluster.nodes) {
      const view = await atSettledHeight(n, log);
      expect(view.validators).toHaveLength(5);
      expect(view.validators).toContain(fifth.keys.publicKey);
    }
    expect((await ledger.chain(fifth.url)).isValidator).toBe(true);
  });

  it('retiring v1: REMOVE first, workload deleted only after /chain stops listing it', async () => {
    const v1 = cluster.nodes[1] as LocalNode;
    const desired = cluster.nodes.filter((n) => n !== v1);
    const log = await reconcileUntilDone(desired, 90_000);

    const kinds = [...new Set(log.map((l) => l.action.type).filter((t) => t !== 'wait'))];
    expect(kinds).toEqual(['submit', 'deleteWorkload', 'none']);
    for (const l of log.filter((x) => x.action.type === 'submit')) {
      expect(l.action).toMatchObject({ change: { action: 'REMOVE', validator: v1.keys.publicKey } });
      expect(l.action.type === 'submit' && l.action.via).not.toBe('v1');
    }
    const del = log.find((l) => l.action.type === 'deleteWorkload');
    expect(del?.action).toEqual({ type: 'deleteWorkload', name: 'v1' });
    expect(del?.chain?.validators).not.toContain(v1.keys.publicKey);
    // Every decision taken while the chain still listed v1 kept its workload.
    for (const l of log)
      if (l.chain?.validators.includes(v1.keys.publicKey)) expect(l.action.type).not.toBe('deleteWorkload');

    expect(removed.has(v1)).toBe(true);
    for (const n of desired) {
      const view = await atSettledHeight(n, log);
      expect(view.validators).toHaveLength(4);
      expect(view.validators).not.toContain(v1.keys.publicKey);
    }
    // The remaining four still finalize blocks.
    const before = (await ledger.chain((desired[0] as LocalNode).url)).height;
    await cluster.post(desired[0] as LocalNode, '/mempool', { records: records('after', 5) });
    await cluster.waitFor(
      'a new block after the removal',
      () => ledger.chain((desired[1] as LocalNode).url),
      (v) => v.height > before,
      30_000,
    );
  });

  it('without a client certificate POST /membership is refused (401); reads stay open', async () => {
    const node = cluster.nodes[0] as LocalNode;
    const noCert = client({ token: cluster.token, caPem: ca.certPem, timeoutMs: 10_000 });
    expect((await noCert.chain(node.url)).validators.length).toBe(4);
    const err = await noCert
      .submitMembership(node.url, { action: 'REMOVE', validator: 'f'.repeat(64) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'http', status: 401 });
    expect((err as Error).message).toMatch(/client certificate/);
  });
});

describe('LedgerNodeClient against hostile servers', () => {
  let server: Server;
  let base: string;
  const hanging = new Set<import('node:http').ServerResponse>();
  /** What /fuzz/chain answers next (set by the property test). */
  let fuzzAnswer: { status: number; body: string } = { status: 200, body: '{}' };

  beforeAll(async () => {
    server = createServer((req, res) => {
      switch (req.url) {
        case '/garbage/chain':
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"height": 1, "validators": [');
          return;
        case '/wrong/chain':
          res.writeHead(200).end(JSON.stringify({ height: -3, validator_keys: 'all of them' }));
          return;
        case '/huge/chain':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(`{"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`);
          return;
        case '/chunked-huge/chain': {
          res.writeHead(200, { 'content-type': 'application/json' });
          for (let i = 0; i < 40; i++) res.write('x'.repeat(16 * 1024));
          res.end();
          return;
        }
        case '/hang/chain':
          hanging.add(res);
          return;
        case '/fail/ready':
          res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
          return;
        case '/notready/ready':
          res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"not synced"}');
          return;
        case '/fuzz/chain':
          res.writeHead(fuzzAnswer.status, { 'content-type': 'application/json' }).end(fuzzAnswer.body);
          return;
        case '/odd/membership':
          res.writeHead(200, { 'content-type': 'application/json' }).end('["accepted"]');
          return;
        default:
          res.writeHead(404).end();
      }
    });
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    for (const res of hanging) res.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('bad, wrong-shaped and oversized bodies are bad-body errors; a hang is a bounded timeout; statuses are typed', async () => {
    // A generous bound for answers that do come (the machine may be loaded); a short one for the hang.
    const c = client({ token: 'cluster-token-for-tests', timeoutMs: 15_000 });
    const impatient = client({ timeoutMs: 500 });
    const kindOf = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: unknown) => (e as LedgerNodeError).kind,
      );
    expect(await kindOf(c.chain(`${base}/garbage`))).toBe('bad-body');
    expect(await kindOf(c.chain(`${base}/wrong`))).toBe('bad-body');
    expect(await kindOf(c.chain(`${base}/huge`))).toBe('bad-body');
    expect(await kindOf(c.chain(`${base}/chunked-huge`))).toBe('bad-body');
    const hang = await impatient.chain(`${base}/hang`).catch((e: unknown) => e);
    expect(hang).toMatchObject({ kind: 'unreachable' });
    expect((hang as Error).message).toMatch(/timed out/);
    expect(await c.ready(`${base}/notready`)).toBe(false);
    expect(await c.ready(`${base}/fail`).catch((e: unknown) => e)).toMatchObject({ kind: 'http', status: 500 });
    expect(await kindOf(c.submitMembership(`${base}/odd`, { action: 'ADD', validator: 'a'.repeat(64) }))).toBe(
      'bad-body',
    );
    expect(await kindOf(c.chain(`${base}/nothing-here`))).toBe('http');
    const closed = await freePort();
    expect(await c.chain(`http://127.0.0.1:${closed}`).catch((e: unknown) => e)).toMatchObject({
      kind: 'unreachable',
    });
  });

  it('fuzz over HTTP: any status and body gives a ChainView or a typed LedgerNodeError, never a crash', async () => {
    const c = client({ timeoutMs: 15_000 });
    const valid = {
      node_id: 'n',
      height: 3,
      latest_hash: 'ab',
      validators: 1,
      quorum: 1,
      is_validator: true,
      validator_keys: ['a'.repeat(64)],
    };
    const body = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc
        .record({
          height: fc.oneof(fc.integer(), fc.double(), fc.string()),
          validators: fc.integer({ min: -1, max: 2 }),
        })
        .map((over) => JSON.stringify({ ...valid, ...over })),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(200, 200, 200, 404, 500, 503), body, async (status, text) => {
        fuzzAnswer = { status, body: text };
        try {
          const view = await c.chain(`${base}/fuzz`);
          expect(status).toBe(200);
          expect(Number.isInteger(view.height)).toBe(true);
          for (const k of view.validators) expect(k).toMatch(/^[0-9a-f]{64}$/);
        } catch (err) {
          expect(err).toBeInstanceOf(LedgerNodeError);
          expect(['bad-body', 'http']).toContain((err as LedgerNodeError).kind);
        }
      }),
      { numRuns: 150, seed: 5 },
    );
  });
});
