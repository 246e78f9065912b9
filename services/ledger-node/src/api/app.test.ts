// The HTTP layer on a real node object (temp data dir, consensus not started), through app.inject().
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { buildGenesis, ConsolePeersBody, messageSigningBytes } from '@scriptorium/ledger-protocol';
import { createSigner, generateKeyPair } from '@scriptorium/ledger-protocol/keys';
import { type AssetStore, loadAssets } from '@scriptorium/web-build';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { createMetrics } from '../metrics.ts';
import { LedgerNode } from '../node/node.ts';
import { ledgerService } from '../node/service.ts';
import { buildApp } from './app.ts';

/** A build of the console as web-build writes one (manifest and files), without running the bundler. */
function fakeConsoleBuild(dir: string): AssetStore {
  const js = 'console.log("console")';
  const css = 'body{margin:0}';
  mkdirSync(join(dir, 'assets'), { recursive: true });
  const file = (name: string, body: string, contentType: string) => {
    writeFileSync(join(dir, 'assets', name), body);
    writeFileSync(join(dir, 'assets', `${name}.gz`), gzipSync(body));
    writeFileSync(join(dir, 'assets', `${name}.br`), brotliCompressSync(body));
    return {
      contentType,
      bytes: body.length,
      gzipBytes: gzipSync(body).length,
      brotliBytes: brotliCompressSync(body).length,
      integrity: `sha384-${createHash('sha384').update(body).digest('base64')}`,
    };
  };
  const manifest = {
    version: 1,
    base: '/ui/assets/',
    entries: { console: { script: 'console-ABCDEF12.js', styles: ['console-ABCDEF34.css'], preload: [] } },
    files: {
      'console-ABCDEF12.js': file('console-ABCDEF12.js', js, 'text/javascript; charset=utf-8'),
      'console-ABCDEF34.css': file('console-ABCDEF34.css', css, 'text/css; charset=utf-8'),
    },
  };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  return loadAssets(dir) as AssetStore;
}

const token = 'test-token-0123456789abcdef';
const auth = { authorization: `Bearer ${token}` };
let dir: string;
let node: LedgerNode;
let app: FastifyInstance;
const audit: Array<Record<string, unknown>> = [];

async function makeApp(overrides: Record<string, string> = {}, consoleAssets?: AssetStore) {
  const keys = generateKeyPair();
  const other = generateKeyPair();
  const d = mkdtempSync(join(tmpdir(), 'ledger-app-'));
  writeFileSync(join(d, 'key.json'), JSON.stringify({ public_key: keys.publicKey, private_key: keys.privateKey }));
  const config = loadConfig({
    NODE_CLUSTER_TOKEN: token,
    NODE_DEBUG_API: 'true',
    NODE_DATA_DIR: join(d, 'data'),
    NODE_KEY_FILE: join(d, 'key.json'),
    MAX_BODY_BYTES: '4096',
    ...overrides,
  });
  const logger = pino(
    { level: 'info' },
    {
      write(line: string) {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (entry.name === 'node.audit') audit.push(entry);
      },
    },
  );
  const metrics = createMetrics();
  const n = new LedgerNode({
    config,
    keys,
    genesis: buildGenesis([keys.publicKey, other.publicKey], 'test-chain', 1),
    logger,
    metrics,
  });
  const a = await buildApp({
    service: ledgerService(n),
    metrics,
    logger,
    clusterToken: config.clusterToken,
    debugApi: config.debugApi,
    maxBodyBytes: config.maxBodyBytes,
    rateLimit: config.rateLimit,
    consoleAssets,
  });
  return { dir: d, node: n, app: a };
}

beforeAll(async () => {
  ({ dir, node, app } = await makeApp());
});
afterAll(async () => {
  await app.close();
  await node.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('read endpoints', () => {
  it('serves health, chain status with the exact fields, genesis block, 404 past the tip', async () => {
    expect((await app.inject('/health')).json()).toEqual({ status: 'ok' });
    const chain = (await app.inject('/chain')).json();
    expect(Object.keys(chain).sort()).toEqual([
      'height',
      'is_validator',
      'latest_hash',
      'node_id',
      'quorum',
      'validator_keys',
      'validators',
    ]);
    expect(chain).toMatchObject({ height: 0, validators: 2, quorum: 2, is_validator: true });
    const genesis = (await app.inject('/blocks/0')).json();
    expect(Object.keys(genesis).sort()).toEqual(['commit_signatures', 'header', 'records', 'validator_changes']);
    const missing = await app.inject('/blocks/1');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: expect.any(String) });
    expect((await app.inject('/blocks/abc')).statusCode).toBe(400);
    expect((await app.inject('/proof/0/0')).statusCode).toBe(404);
    expect((await app.inject('/metrics')).body).toContain('scriptorium_ledger_height');
  });
});

describe('authentication and audit', () => {
  it('401 without or with a wrong token on every protected endpoint, and logs node.audit', async () => {
    const routes: Array<[string, string]> = [
      ['POST', '/consensus'],
      ['POST', '/mempool'],
      ['POST', '/membership'],
      ['POST', '/block'],
      ['POST', '/peers'],
      ['GET', '/peers'],
      ['POST', '/admin/submit?count=1'],
      ['POST', '/admin/validator'],
    ];
    for (const [method, url] of routes) {
      for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: token }]) {
        const res = await app.inject({
          method: method as 'GET',
          url,
          headers,
          payload: method === 'POST' ? {} : undefined,
        });
        expect(res.statusCode, `${method} ${url}`).toBe(401);
        expect(res.json()).toEqual({ error: 'token missing or invalid' });
      }
    }
    const entry = audit.find((e) => e.path === '/mempool');
    expect(entry).toMatchObject({ method: 'POST', authenticated: false, status: 401, client: '127.0.0.1' });
    expect(JSON.stringify(audit)).not.toContain(token);
  });

  it('accepts the token: mempool, peers merge and list, admin submit', async () => {
    const rec = await app.inject({
      method: 'POST',
      url: '/mempool',
      headers: auth,
      payload: { records: [{ id: 'r1', value: 1 }] },
    });
    expect(rec.statusCode).toBe(200);
    expect(rec.json()).toEqual({ accepted: 1 });
    const again = await app.inject({
      method: 'POST',
      url: '/mempool',
      headers: auth,
      payload: { records: [{ id: 'r1', value: 1 }] },
    });
    expect(again.json()).toEqual({ accepted: 0 });
    const spec = `peer-x@10.1.2.3:8000|${'c'.repeat(64)}`;
    expect(
      (await app.inject({ method: 'POST', url: '/peers', headers: auth, payload: { peers: [spec] } })).json(),
    ).toEqual({ added: 1, updated: 0 });
    const moved = `peer-x@10.1.2.4:8001|${'c'.repeat(64)}`;
    expect(
      (await app.inject({ method: 'POST', url: '/peers', headers: auth, payload: { peers: [moved] } })).json(),
    ).toEqual({ added: 0, updated: 1 });
    const list = (await app.inject({ method: 'GET', url: '/peers', headers: auth })).json().peers as string[];
    expect(list).toContain(moved);
    expect(list).not.toContain(spec);
    expect(list[0]).toContain(node.keys.publicKey);
    expect((await app.inject({ method: 'POST', url: '/admin/submit?count=5', headers: auth })).json()).toEqual({
      accepted: 5,
    });
    expect(node.mempool.size).toBe(6);
    expect(audit.some((e) => e.path === '/admin/submit' && e.authenticated === true && e.status === 200)).toBe(true);
  });
});

describe('POST /block', () => {
  it('answers known before parsing when the x-block-height is already stored', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/block',
      headers: { ...auth, 'content-type': 'application/json', 'x-block-height': '0' },
      payload: '{"not": "parsed"',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ height: 0, status: 'known' });
    const unknown = await app.inject({
      method: 'POST',
      url: '/block',
      headers: { ...auth, 'content-type': 'application/json', 'x-block-height': '5' },
      payload: '{"not": "parsed"',
    });
    expect(unknown.statusCode).toBe(400);
  });
});

describe('limits and malformed payloads', () => {
  it('413 above MAX_BODY_BYTES', async () => {
    const big = { records: [{ id: 'x', pad: 'a'.repeat(5000) }] };
    const res = await app.inject({ method: 'POST', url: '/mempool', headers: auth, payload: big });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'payload above MAX_BODY_BYTES' });
  });

  it('400 for malformed bodies', async () => {
    const cases: Array<[string, unknown]> = [
      ['/mempool', { records: 'x' }],
      ['/mempool', { records: [{ noid: 1 }] }],
      ['/mempool', { records: [{ id: 'twice' }, { id: 'twice' }] }],
      ['/membership', { changes: [{ action: 'MAYBE', validator: 'a'.repeat(64) }] }],
      ['/membership', { changes: [] }],
      ['/peers', { peers: ['not a spec'] }],
      ['/block', { header: 'x' }],
      ['/consensus', { type: 'PREPARE' }],
      ['/admin/validator', { action: 'ADD', validator: 'zz' }],
    ];
    for (const [url, payload] of cases) {
      const res = await app.inject({ method: 'POST', url, headers: auth, payload: payload as object });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error, url).toEqual(expect.any(String));
    }
    const notJson = await app.inject({
      method: 'POST',
      url: '/mempool',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"records": [',
    });
    expect(notJson.statusCode).toBe(400);
    const text = await app.inject({
      method: 'POST',
      url: '/mempool',
      headers: { ...auth, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(400);
    expect((await app.inject({ method: 'POST', url: '/admin/submit?count=-1', headers: auth })).statusCode).toBe(400);
  });

  it("a refused consensus message: 400 with the gate's own reason in the error text", async () => {
    const stranger = createSigner(generateKeyPair().privateKey);
    const own = createSigner(node.keys.privateKey);
    const prepare = (signer: typeof own, chainId = 'test-chain') => {
      const unsigned = {
        type: 'PREPARE' as const,
        chain_id: chainId,
        height: 1,
        round: 0,
        author: signer.publicKey,
        block_hash: 'a'.repeat(64),
      };
      return { ...unsigned, signature: signer.sign(messageSigningBytes(unsigned)) };
    };
    const cases: Array<[unknown, string]> = [
      [{ type: 'PREPARE' }, 'malformed'],
      [prepare(own, 'another-chain'), 'wrong_chain'],
      [prepare(stranger), 'unknown_sender'],
      [{ ...prepare(own), signature: 'ef'.repeat(64) }, 'bad_signature'],
    ];
    for (const [payload, reason] of cases) {
      const res = await app.inject({ method: 'POST', url: '/consensus', headers: auth, payload: payload as object });
      expect(res.statusCode, reason).toBe(400);
      expect(res.json(), reason).toEqual({
        error: expect.stringMatching(new RegExp(`^consensus message refused: ${reason}\\b`)),
      });
    }
  });

  it('fuzz: arbitrary JSON and bytes never give a 5xx on any body parser', async () => {
    const urls = ['/consensus', '/mempool', '/membership', '/block', '/peers', '/admin/validator'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...urls),
        fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.string({ maxLength: 200 })),
        async (url, body) => {
          const payload = typeof body === 'string' ? body : JSON.stringify(body);
          const res = await app.inject({
            method: 'POST',
            url,
            headers: { ...auth, 'content-type': 'application/json' },
            payload,
          });
          expect(res.statusCode).toBeLessThan(500);
          expect(typeof res.json().error === 'string' || res.statusCode === 200).toBe(true);
        },
      ),
      { numRuns: 250 },
    );
  });

  it('429 per request source once the bucket is empty', async () => {
    const limited = await makeApp({ NODE_RATE_LIMIT__RPS: '1', NODE_RATE_LIMIT__BURST: '3' });
    try {
      const codes: number[] = [];
      for (let i = 0; i < 5; i++) codes.push((await limited.app.inject('/health')).statusCode);
      expect(codes).toEqual([200, 200, 200, 429, 429]);
      // Another source has its own bucket.
      expect((await limited.app.inject({ url: '/health', remoteAddress: '10.9.9.9' })).statusCode).toBe(200);
      const res = await limited.app.inject('/health');
      expect(res.json()).toEqual({ error: 'rate limit exceeded' });
    } finally {
      await limited.app.close();
      await limited.node.stop();
      rmSync(limited.dir, { recursive: true, force: true });
    }
  });

  it('has no admin routes without NODE_DEBUG_API', async () => {
    const plain = await makeApp({ NODE_DEBUG_API: 'false' });
    try {
      expect((await plain.app.inject({ method: 'POST', url: '/admin/submit?count=1', headers: auth })).statusCode).toBe(
        404,
      );
    } finally {
      await plain.app.close();
      await plain.node.stop();
      rmSync(plain.dir, { recursive: true, force: true });
    }
  });
});

describe('the console (/ui) and CORS on the open reads', () => {
  it('without a build, /ui says so (503); the assets path knows no file', async () => {
    const res = await app.inject('/ui');
    expect(res.statusCode).toBe(503);
    expect(res.body).toMatch(/not built/);
    expect((await app.inject('/ui/assets/console-ABCDEF12.js')).statusCode).toBe(404);
  });

  it('serves the page under a strict CSP naming the peers for connect-src, and its files from the manifest', async () => {
    const d = mkdtempSync(join(tmpdir(), 'ledger-console-'));
    const built = await makeApp({}, fakeConsoleBuild(d));
    try {
      const spec = `peer-y@10.1.2.9:8001|${'d'.repeat(64)}`;
      await built.app.inject({ method: 'POST', url: '/peers', headers: auth, payload: { peers: [spec] } });
      const res = await built.app.inject('/ui');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      const csp = String(res.headers['content-security-policy']);
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1] as string;
      expect(nonce.length).toBeGreaterThanOrEqual(16);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain(`script-src 'nonce-${nonce}' 'self'`);
      expect(csp).toContain("connect-src 'self' http://10.1.2.9:8001");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|strict-dynamic/);
      expect(res.headers['cache-control']).toBe('no-store');
      // Only tags with the nonce and an integrity value; nothing inline.
      expect(res.body).toContain(`<script type="module" src="/ui/assets/console-ABCDEF12.js"`);
      expect(res.body).toContain(`nonce="${nonce}"`);
      expect(res.body).not.toMatch(/<script>|<style|\sstyle="|\son[a-z]+="/);
      const again = String((await built.app.inject('/ui')).headers['content-security-policy']);
      expect(again).not.toContain(nonce); // a fresh nonce per response
      const js = await built.app.inject({
        url: '/ui/assets/console-ABCDEF12.js',
        headers: { 'accept-encoding': 'br' },
      });
      expect(js.statusCode).toBe(200);
      expect(js.headers['content-encoding']).toBe('br');
      expect(js.headers['cache-control']).toMatch(/immutable/);
      expect((await built.app.inject('/ui/assets/..%2Fmanifest.json')).statusCode).toBe(404);
    } finally {
      await built.app.close();
      await built.node.stop();
      rmSync(built.dir, { recursive: true, force: true });
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('GET /ui/peers is the read-only peer list: this node, its round, each peer with its address', async () => {
    const res = await app.inject('/ui/peers');
    expect(res.statusCode).toBe(200);
    const body = ConsolePeersBody.parse(res.json());
    expect(body.public_key).toBe(node.keys.publicKey);
    expect(body.round).toBe(0);
    expect(body.peers.every((p) => /^[\w.-]+:\d+$/.test(p.address))).toBe(true);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });

  it('the open reads send CORS headers, errors included; peer and admin routes do not', async () => {
    for (const url of ['/health', '/chain', '/blocks/0', '/blocks/99', '/proof/0/0', '/ui/peers'])
      expect((await app.inject(url)).headers['access-control-allow-origin'], url).toBe('*');
    expect((await app.inject({ url: '/peers', headers: auth })).headers['access-control-allow-origin']).toBeUndefined();
    const post = await app.inject({ method: 'POST', url: '/mempool', headers: auth, payload: { records: [] } });
    expect(post.headers['access-control-allow-origin']).toBeUndefined();
    expect((await app.inject('/metrics')).headers['access-control-allow-origin']).toBeUndefined();
  });

  it('serves its OpenAPI document; a wrong method is 405 with Allow, an over-long parameter 414, both {error}', async () => {
    const doc = (await app.inject('/openapi.json')).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/health', '/chain', '/blocks/{index}', '/proof/{height}/{index}', '/peers']),
    );
    expect(doc.paths['/blocks/{index}'].get.responses['200'].content['application/json'].schema.properties).toEqual(
      expect.objectContaining({ header: expect.any(Object), commit_signatures: expect.any(Object) }),
    );
    expect(Object.keys(doc.paths['/proof/{height}/{index}'].get.responses)).toEqual([
      '200',
      '400',
      '404',
      '414',
      '429',
      '431',
    ]);
    expect(doc.paths['/peers'].get.security).toEqual([{ clusterToken: [] }]);
    const wrong = await app.inject({ method: 'DELETE', url: '/chain' });
    expect([wrong.statusCode, wrong.headers.allow]).toEqual([405, 'GET, HEAD']);
    expect(wrong.json()).toEqual({ error: expect.any(String) });
    const peers = await app.inject({ method: 'PUT', url: '/peers' });
    expect([peers.statusCode, peers.headers.allow]).toEqual([405, 'GET, HEAD, POST']);
    const long = await app.inject(`/blocks/${'1'.repeat(200)}`);
    expect([long.statusCode, long.json()]).toEqual([414, { error: expect.any(String) }]);
    expect((await app.inject('/nowhere')).statusCode).toBe(404);
  });
});
