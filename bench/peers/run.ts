// bench/peers: our two hot paths beside the systems users would pick instead, in one sitting on this machine.
//   ledger:      4 validators on loopback (bench/ledger's cluster and load loop) vs a CometBFT localnet of 4
//                validators with its built-in kvstore app, in two settings (cometbft.ts)
//   translation: the service (1 process, real PostgreSQL, full metering, as bench/translation runs it) vs Portkey's
//                gateway (portkey.ts), both in front of the same zero-latency fake OpenAI-compatible upstream
// Rounds alternate ours and theirs (BENCH_PEERS_ROUNDS, default 3); each prints its figures, the ratios and the load
// average at its start and end. Writes bench/results/peers.json (peers-quick.json with BENCH_PEERS_QUICK=1).
//   BENCH=peers make bench
//   BENCH_PEERS_QUICK=1          short phases, one round: a smoke run
//   BENCH_PEERS_PARTS=ledger     one part only (ledger, translation)
//   BENCH_PEERS_PROFILE=1        then CPU profiles of a validator and of the service under the saturating load
import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { FAKE_API_KEY, startFakeOpenAI } from '@scriptorium/harness/translation-fakes';
import { createTestDatabase, startTestPostgres } from '@scriptorium/test-support';
import { freePort } from '@scriptorium/test-support/ports';
import { connectProfiler, relativeUrls, summarize } from '../cpu-profile.ts';
import type { LoadResult } from '../ledger/load-driver.ts';
import { cpuSeconds, postgresCpuSeconds } from '../proc-cpu.ts';
import {
  type Load,
  load,
  postmasterOfDatabase,
  seedBenchOrganization,
  serviceEnv,
  startReplicas,
  TRANSLATE_BODY,
} from '../translation/setup.ts';
import { BENCH_NODE_ENV, benchCluster, runLoad, startWarm } from '../validators.ts';
import { COMET_SETTINGS, type CometSetting, startCometLocalnet } from './cometbft.ts';
import { portkeyRequest, portkeyVersion, startPortkey } from './portkey.ts';
import { printRound, printSummary, type Row } from './table.ts';

const here = import.meta.dirname;
const root = join(here, '..', '..');
const quick = process.env.BENCH_PEERS_QUICK === '1';
const ROUNDS = Math.max(1, Number(process.env.BENCH_PEERS_ROUNDS ?? (quick ? 1 : 3)));
const PROFILE = process.env.BENCH_PEERS_PROFILE === '1';
// A quick run's files never replace a real run's.
const NAME = quick ? 'peers-quick' : 'peers';
const PARTS = (process.env.BENCH_PEERS_PARTS ?? 'ledger,translation').split(',');
const COMET: CometSetting[] = ['default', 'fast'];
const T = {
  // Ledger: seconds of idle CPU reading, and of submitting in each load phase (then up to the drain for finality).
  idleSeconds: quick ? 3 : 10,
  loadSeconds: quick ? 3 : 10,
  // Translation: 64 connections for throughput; one connection for added latency; warm-up before both.
  connections: 64,
  throughputSeconds: quick ? 3 : 20,
  sequentialSeconds: quick ? 2 : 5,
  warmupSeconds: quick ? 2 : 5,
};

const build = JSON.parse(
  execFileSync('bash', [join(here, 'build.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim(),
) as { cometbft: string; portkey: string };
const versions = {
  cometbft: execFileSync(build.cometbft, ['version'], { encoding: 'utf8' }).trim(),
  portkey: portkeyVersion(build.portkey),
  node: process.version,
};
const round1 = (x: number) => Math.round(x * 10) / 10;
const load1m = () => round1(loadavg()[0]!);

// ---- ledger ----

interface ChainFigures {
  idleCpuPercentOfCore: number;
  offered1000: LoadResult;
  offered5000: LoadResult;
  saturation: LoadResult;
}

/** Idle CPU of the validators, then 1,000/s and 5,000/s offered (open loop), then the closed-loop saturation. */
async function measureChain(urls: string[], pids: number[], loadScript?: string, token?: string) {
  const cpu = () => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const c0 = cpu();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, T.idleSeconds * 1000));
  const idle = (100 * (cpu() - c0)) / ((performance.now() - t0) / 1000);
  const base = { urls, token, concurrency: 1, maxOutstanding: 0, durationMs: T.loadSeconds * 1000 };
  // As bench/ledger: a batch every 50 ms (1,000/s: 50 records; 5,000/s: 250).
  const offered1000 = await runLoad({ ...base, mode: 'rate', batch: 50, intervalMs: 50, drainMs: 20_000 }, loadScript);
  const offered5000 = await runLoad({ ...base, mode: 'rate', batch: 250, intervalMs: 50, drainMs: 20_000 }, loadScript);
  const saturation = await runLoad(
    { ...base, mode: 'throughput', batch: 500, concurrency: 4, intervalMs: 0, drainMs: 30_000, maxOutstanding: 20_000 },
    loadScript,
  );
  return { idleCpuPercentOfCore: round1(idle), offered1000, offered5000, saturation } satisfies ChainFigures;
}

/** 4 validators as bench/ledger runs them, warmed up (`env(i)`: what node i adds); the caller stops them. */
async function ourValidators(env: (index: number) => Record<string, string> = () => ({})) {
  const cluster = await benchCluster({ size: 4 });
  try {
    await startWarm(cluster, env);
  } catch (err) {
    await cluster.stopAll();
    throw err;
  }
  return cluster;
}

async function ledgerOurs(): Promise<ChainFigures> {
  const cluster = await ourValidators();
  try {
    return await measureChain(
      cluster.nodes.map((n) => n.url),
      cluster.nodes.map((n) => n.process!.pid!),
      undefined,
      cluster.token,
    );
  } finally {
    await cluster.stopAll();
  }
}

async function ledgerComet(setting: CometSetting): Promise<ChainFigures> {
  const net = await startCometLocalnet(build.cometbft, setting);
  try {
    return await measureChain(
      net.nodes.map((n) => n.rpcUrl),
      net.nodes.map((n) => n.process.pid!),
      join(here, 'comet-load.ts'),
    );
  } finally {
    await net.stop();
  }
}

// ---- translation ----

interface ProxyFigures {
  requestsPerSecond: number;
  non2xx: number;
  errors: number;
  latencyMs: Load['latencyMs'];
  /** CPU of the proxy's process per request in the throughput phase (ours: the service, and PostgreSQL apart). */
  cpuMsPerRequest: number;
  postgresCpuMsPerRequest?: number;
  oneConnection: {
    proxy: Load['latencyMs'];
    upstream: Load['latencyMs'];
    addedMs: { p50: number; p99: number; mean: number };
  };
}

type Request = { url: string; method: string; headers: Record<string, string>; body: string };

/** Warm-up, 64 connections (CPU from /proc), then one connection through the proxy and straight to the upstream. */
async function measureProxy(
  request: Request,
  upstream: Request,
  pid: number,
  postmaster?: number,
): Promise<ProxyFigures> {
  await load({ ...request, connections: T.connections, duration: T.warmupSeconds });
  const c0 = cpuSeconds(pid);
  const pg0 = postmaster ? postgresCpuSeconds(postmaster) : 0;
  const max = await load({ ...request, connections: T.connections, duration: T.throughputSeconds });
  const perRequest = (seconds: number) => Math.round(((seconds * 1000) / Math.max(1, max.total)) * 1000) / 1000;
  const cpu = perRequest(cpuSeconds(pid) - c0);
  const pg = postmaster ? perRequest(postgresCpuSeconds(postmaster) - pg0) : undefined;
  const seq = await load({ ...request, connections: 1, duration: T.sequentialSeconds });
  const direct = await load({ ...upstream, connections: 1, duration: T.sequentialSeconds });
  return {
    requestsPerSecond: Math.round(max.requestsPerSecond),
    non2xx: max.non2xx,
    errors: max.errors,
    latencyMs: max.latencyMs,
    cpuMsPerRequest: cpu,
    ...(pg === undefined ? {} : { postgresCpuMsPerRequest: pg }),
    oneConnection: {
      proxy: seq.latencyMs,
      upstream: direct.latencyMs,
      addedMs: {
        p50: round1(seq.latencyMs.p50 - direct.latencyMs.p50),
        p99: round1(seq.latencyMs.p99 - direct.latencyMs.p99),
        // autocannon's percentiles are whole milliseconds; its mean is not, and tells sub-millisecond differences.
        mean: Math.round((seq.latencyMs.mean - direct.latencyMs.mean) * 100) / 100,
      },
    },
  };
}

// One PostgreSQL server, database and fake upstream for the whole run; each round starts its own proxies.
const fake = await startFakeOpenAI({ latencyMs: 0, usage: { tokensIn: 700, tokensOut: 350 } });
let pg: Awaited<ReturnType<typeof startTestPostgres>> | undefined;
let testDb: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let apiKey = '';
let postmaster = 0;
/** The upstream request the service makes for TRANSLATE_BODY: what Portkey is sent, and the "upstream alone". */
let upstreamBody = '';

async function ensureDatabase(): Promise<void> {
  if (testDb) return;
  pg = await startTestPostgres();
  testDb = await createTestDatabase(pg.url, 'bench_peers');
  apiKey = await seedBenchOrganization(testDb.url);
  postmaster = await postmasterOfDatabase(testDb.url);
}

const upstreamRequest = (): Request => ({
  url: `${fake.url}/chat/completions`,
  method: 'POST',
  headers: { authorization: `Bearer ${FAKE_API_KEY}`, 'content-type': 'application/json' },
  body: upstreamBody,
});

async function check(request: Request): Promise<void> {
  const res = await fetch(request.url, request);
  if (res.status !== 200) throw new Error(`${request.url} answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

async function startOurService(nodeArgs: string[] = []) {
  await ensureDatabase();
  const port = await freePort();
  const env = serviceEnv({ databaseUrl: testDb!.url, port, upstreamUrl: fake.url });
  const [service] = await startReplicas({ env, port, replicas: 1, nodeArgs });
  const request: Request = {
    url: `http://127.0.0.1:${port}/api/v1/translate`,
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: TRANSLATE_BODY,
  };
  try {
    await check(request);
  } catch (err) {
    await stopChild(service);
    throw err;
  }
  if (!upstreamBody) upstreamBody = JSON.stringify(fake.lastRequest!.body);
  return { service: service!, request };
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function translationOurs(): Promise<ProxyFigures> {
  const { service, request } = await startOurService();
  try {
    return await measureProxy(request, upstreamRequest(), service.pid!, postmaster);
  } finally {
    await stopChild(service);
  }
}

async function startTheirGateway(nodeArgs: string[] = []) {
  if (!upstreamBody) await stopChild((await startOurService()).service); // learn the upstream request once
  const port = await freePort();
  const gateway = await startPortkey({
    installDir: build.portkey,
    port,
    log: join(tmpdir(), `bench-peers-portkey-${process.pid}.log`),
    nodeArgs,
  });
  const request = portkeyRequest(port, fake.url, FAKE_API_KEY, upstreamBody);
  try {
    await check(request);
  } catch (err) {
    await stopChild(gateway);
    throw err;
  }
  return { gateway, request };
}

async function translationPortkey(): Promise<ProxyFigures> {
  const { gateway, request } = await startTheirGateway();
  try {
    return await measureProxy(request, upstreamRequest(), gateway.pid!);
  } finally {
    await stopChild(gateway);
  }
}

// ---- rounds ----

/** A figure that did not come out (a phase failed) is recorded with its error, and the others still run. */
async function attempt<R>(what: string, f: () => Promise<R>): Promise<R | { error: string }> {
  console.log(`  ${what} …`);
  try {
    return await f();
  } catch (err) {
    console.log(`  ${what}: failed: ${(err as Error).message}`);
    return { error: (err as Error).message };
  }
}
const ok = <R extends object>(x: R | { error: string } | undefined): R | undefined =>
  x === undefined || 'error' in x ? undefined : (x as R);

/** The table's rows of one round: each measure, ours, each peer setting, and the ratio (> 1: ours ahead). */
function rowsOf(round: Round): Row[] {
  const rows: Row[] = [];
  const l = round.ledger;
  if (l) {
    const ours = ok<ChainFigures>(l.ours);
    const theirs = COMET.map((s) => ok<ChainFigures>(l[`cometbft_${s}`]));
    const chain = (name: string, unit: string, better: 'higher' | 'lower', f: (c: ChainFigures) => number) =>
      rows.push({
        part: 'ledger',
        measure: name,
        unit,
        better,
        ours: ours ? f(ours) : undefined,
        theirs: theirs.map((c) => (c ? f(c) : undefined)),
      });
    chain('closed-loop saturation', 'records/s', 'higher', (c) => c.saturation.records_per_second);
    chain('1,000/s offered: p50', 'ms', 'lower', (c) => c.offered1000.latency_ms.p50);
    chain('1,000/s offered: p99', 'ms', 'lower', (c) => c.offered1000.latency_ms.p99);
    chain('5,000/s offered: finalized', 'records/s', 'higher', (c) => c.offered5000.records_per_second);
    chain('5,000/s offered: p50', 'ms', 'lower', (c) => c.offered5000.latency_ms.p50);
    chain('5,000/s offered: p99', 'ms', 'lower', (c) => c.offered5000.latency_ms.p99);
    chain('idle CPU, 4 validators', '% of a core', 'lower', (c) => c.idleCpuPercentOfCore);
  }
  const t = round.translation;
  if (t) {
    const ours = ok<ProxyFigures>(t.ours);
    const theirs = ok<ProxyFigures>(t.portkey);
    const proxy = (name: string, unit: string, better: 'higher' | 'lower', f: (p: ProxyFigures) => number) =>
      rows.push({
        part: 'translation',
        measure: name,
        unit,
        better,
        ours: ours ? f(ours) : undefined,
        theirs: [theirs ? f(theirs) : undefined],
      });
    proxy('64 connections', 'req/s', 'higher', (p) => p.requestsPerSecond);
    proxy('one connection: added p50', 'ms', 'lower', (p) => p.oneConnection.addedMs.p50);
    proxy('one connection: added p99', 'ms', 'lower', (p) => p.oneConnection.addedMs.p99);
    proxy('one connection: added mean', 'ms', 'lower', (p) => p.oneConnection.addedMs.mean);
    proxy('CPU per request (process)', 'ms', 'lower', (p) => p.cpuMsPerRequest);
    proxy('CPU per request (+ PostgreSQL)', 'ms', 'lower', (p) => p.cpuMsPerRequest + (p.postgresCpuMsPerRequest ?? 0));
  }
  return rows;
}

interface Round {
  round: number;
  loadAverage: { start: number[]; end: number[] };
  startedAt: string;
  ledger?: Record<string, ChainFigures | { error: string }>;
  translation?: Record<string, ProxyFigures | { error: string }>;
  rows?: Row[];
}

const rounds: Round[] = [];
const profiles: Record<string, unknown> = {};
try {
  for (let r = 1; r <= ROUNDS; r++) {
    const round: Round = { round: r, startedAt: new Date().toISOString(), loadAverage: { start: loadavg(), end: [] } };
    console.log(`\nround ${r}/${ROUNDS} (load average ${load1m()})`);
    if (PARTS.includes('ledger')) {
      round.ledger = { ours: await attempt('ledger: ours, 4 validators', ledgerOurs) };
      for (const s of COMET)
        round.ledger[`cometbft_${s}`] = await attempt(`ledger: CometBFT (${s}), 4 validators`, () => ledgerComet(s));
    }
    if (PARTS.includes('translation')) {
      round.translation = { ours: await attempt('translation: ours, 1 process', translationOurs) };
      round.translation.portkey = await attempt('translation: Portkey gateway', translationPortkey);
    }
    round.loadAverage.end = loadavg();
    round.rows = rowsOf(round);
    rounds.push(round);
    printRound(
      round.rows,
      round.loadAverage,
      COMET.map((s) => `CometBFT ${s}`),
    );
  }
  if (rounds.length > 1)
    printSummary(
      rounds.map((x) => x.rows!),
      COMET.map((s) => `CometBFT ${s}`),
    );

  if (PROFILE) {
    mkdirSync(join(root, 'bench/results'), { recursive: true });
    // Profiles under the saturating load: validator 0 and the service, each under the inspector (100 µs is the
    // other benches' interval; 500 µs keeps a run's file small). The profiler slows them: not the figures.
    if (PARTS.includes('ledger')) {
      console.log('\nprofile: validator 0 under the closed-loop saturation …');
      const port = await freePort();
      const inspect: Record<string, string> = { NODE_OPTIONS: `--inspect=127.0.0.1:${port}` };
      const cluster = await ourValidators((i) => (i === 0 ? inspect : {}));
      try {
        const profiler = await connectProfiler(port, 500);
        await profiler.start();
        await runLoad({
          urls: cluster.nodes.map((n) => n.url),
          token: cluster.token,
          mode: 'throughput',
          durationMs: T.loadSeconds * 1000,
          batch: 500,
          concurrency: 4,
          intervalMs: 0,
          drainMs: 30_000,
          maxOutstanding: 20_000,
        });
        const profile = relativeUrls(await profiler.stop(), [[root, '']]);
        profiler.close();
        writeFileSync(join(root, `bench/results/${NAME}-profile-ledger-node.cpuprofile`), JSON.stringify(profile));
        profiles.ledgerNode = summarize([profile], 30);
      } finally {
        await cluster.stopAll();
      }
    }
    if (PARTS.includes('translation')) {
      console.log('profile: the translation service under 64 connections …');
      const port = await freePort();
      const { service, request } = await startOurService([`--inspect=127.0.0.1:${port}`]);
      try {
        await load({ ...request, connections: T.connections, duration: T.warmupSeconds });
        const profiler = await connectProfiler(port, 500);
        await profiler.start();
        await load({ ...request, connections: T.connections, duration: T.throughputSeconds });
        const profile = relativeUrls(await profiler.stop(), [[root, '']]);
        profiler.close();
        writeFileSync(join(root, `bench/results/${NAME}-profile-translation.cpuprofile`), JSON.stringify(profile));
        profiles.translationService = summarize([profile], 30);
      } finally {
        await stopChild(service);
      }
    }
    writeFileSync(join(root, `bench/results/${NAME}-profile.json`), `${JSON.stringify(profiles, null, 2)}\n`);
    console.log(`wrote bench/results/${NAME}-profile.json and its .cpuprofile files`);
  }
} finally {
  await fake.close();
  await testDb?.drop().catch(() => {});
  await pg?.stop();
}

const out = join(root, 'bench/results', `${NAME}.json`);
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      benchmark: 'peers',
      date: new Date().toISOString(),
      quick,
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model ?? 'unknown',
        memoryGiB: Math.round(totalmem() / 2 ** 30),
      },
      versions,
      settings: {
        durations: T,
        ledger: {
          ours: { validators: 4, env: BENCH_NODE_ENV, roundTimeoutMs: 2000 },
          cometbft: Object.fromEntries(
            Object.entries(COMET_SETTINGS).map(([name, changes]) => [
              name,
              changes.map(([section, key, value, why]) => ({ section, key, value, why })),
            ]),
          ),
          cometbftApp: 'kvstore (built in, --proxy_app=kvstore)',
          load: 'one load-generator process (bench/ledger/load-driver.ts); batches round-robin over the 4 nodes; finality on node 0 (ours: /chain + /blocks/h; CometBFT: /status + /block?height=h), polled every 10 ms',
        },
        translation: {
          ours: '1 service process, PostgreSQL (pool 20), metering on, provider openai → the fake upstream',
          portkey:
            'build/start-server.js --headless, NODE_ENV=production; x-portkey-provider: openai, x-portkey-custom-host: the fake upstream',
          request:
            'ours: POST /api/v1/translate (10 strings); Portkey: the chat-completions request the service sends upstream for it',
          upstream: 'the fake OpenAI-compatible server of bench/translation, zero latency, in the bench process',
          load: `autocannon in its own process: ${T.connections} connections for ${T.throughputSeconds} s; one connection for ${T.sequentialSeconds} s`,
        },
      },
      rounds,
      ...(PROFILE ? { profiles: `bench/results/${NAME}-profile.json` } : {}),
    },
    null,
    2,
  )}\n`,
);
console.log(`\nwrote ${out.slice(root.length + 1)}`);
