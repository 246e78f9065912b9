// bench/translation-file: POST /api/v1/translate/file with a 2,000-key nested JSON file and a 2,000-unit XLIFF 2.0
// file through the pseudo provider, the service as its own process on real PostgreSQL. For each file: a first run
// (the organization's translation memory on and empty: every string goes to the provider) and a second run of the
// same file (every string answered from the memory), each timed by the wall clock and by the service's CPU (the
// scheduler's run time of its threads, in nanoseconds), with the provider requests and tokens of each run (the
// service's /metrics). RUNS (default 3) repetitions, each with a fresh organization; medians reported. Writes
// bench/results/translation-file.json.
// BASELINE=<another checkout's services/translation/src/main.ts> starts that service too, on the same database server,
// and runs each repetition on both, alternating which goes first: before and after in one sitting, in one file.
// PROFILE=1 runs the service under the inspector and records a CPU profile of each run (not the timed figures: the
// profiler costs time): bench/results/translation-file-profile-[baseline-]<format>-<first|second>.cpuprofile (the
// last repetition's) and bench/results/translation-file-profile.json (where the time of every repetition went).
// PROVIDER=openai runs the same against the fake OpenAI-compatible upstream of the service's tests, in the bench
// process, answering after LATENCY_MS (default 500; an LLM takes seconds): what a real provider's latency makes of
// the first run. Writes bench/results/translation-file-openai.json.
//   BENCH=translation-file make bench         (RUNS=3; PROVIDER=pseudo | openai, LATENCY_MS=500; BASELINE; PROFILE=1)
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { FAKE_API_KEY, startFakeOpenAI } from '@scriptorium/harness/translation-fakes';
import { createTestDatabase, startTestPostgres } from '@scriptorium/test-support';
import { freePort } from '@scriptorium/test-support/ports';
import { createOrganization, ensureUser, issueApiKey, migrate, openDatabase } from '@scriptorium/translation';
import { type CpuProfile, connectProfiler, type Profiler, relativeUrls, summarize } from '../cpu-profile.ts';
import { postgresCpuSeconds, postmasterOf, threadCpuSeconds } from '../proc-cpu.ts';
import { startService, stopService, unlimited } from '../translation-service.ts';

const root = join(import.meta.dirname, '..', '..');
const RUNS = Math.max(1, Math.min(10, Number(process.env.RUNS ?? 3)));
const KEYS = 2_000;
const PROVIDER = process.env.PROVIDER === 'openai' ? 'openai' : 'pseudo';
const LATENCY_MS = Math.max(0, Number(process.env.LATENCY_MS ?? 500));
const RESULTS = `bench/results/translation-file${PROVIDER === 'openai' ? '-openai' : ''}.json`;
const BASELINE = process.env.BASELINE ? resolve(process.env.BASELINE) : undefined;
const PROFILE = process.env.PROFILE === '1';

/**
 * A 2,000-key i18next/ICU file in 40 sections: plain strings, arguments, tags, and an ICU plural every tenth key.
 * `offset` changes every text (the warm-up file shares no string with the measured one, so no cache helps it).
 */
function nestedJson(offset = 0): string {
  const doc: Record<string, Record<string, string>> = {};
  for (let s = 0; s < KEYS / 50; s++) {
    const section: Record<string, string> = {};
    for (let k = 0; k < 50; k++) {
      const i = s * 50 + k + offset;
      section[`key${k}`] =
        i % 10 === 0
          ? `{count, plural, one {# message in folder ${i}} other {# messages in folder ${i}}}`
          : i % 3 === 0
            ? `Hello {name}, you have new items in <b>project ${i}</b>`
            : `Save the changes to document number ${i} before closing`;
    }
    doc[`section${s}`] = section;
  }
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** A 2,000-unit XLIFF 2.0 file with inline codes (<pc>, <ph>) in a third of the units; `offset` as above. */
function xliff2(offset = 0): string {
  const units = Array.from({ length: KEYS }, (_, n) => {
    const i = n + offset;
    const source =
      i % 3 === 0
        ? `Press <pc id="1">Enter</pc> to open item ${i} <ph id="2"/>.`
        : `The file number ${i} was saved to your workspace.`;
    return `    <unit id="u${i}">\n      <segment>\n        <source>${source}</source>\n      </segment>\n    </unit>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en">\n  <file id="app">\n${units.join('\n')}\n  </file>\n</xliff>\n`;
}

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.split(' ').pop());
  return sum;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

interface Run {
  wallMs: number;
  serviceCpuMs: number;
  postgresCpuMs: number;
  providerRequests: number;
  tokensIn: number;
  tokensOut: number;
  fromMemory: number;
  issues: number;
}

interface Service {
  name: 'current' | 'baseline';
  main: string | undefined;
  pid: number;
  base: string;
  profiler?: Profiler;
  /** API keys: one organization per run, and the last one for the warm-up. */
  keys: string[];
}

const pg = await startTestPostgres();
const fake = PROVIDER === 'openai' ? await startFakeOpenAI({ latencyMs: LATENCY_MS }) : null;
const testDb = await createTestDatabase(pg.url, 'bench_translation_file');
const processes: Awaited<ReturnType<typeof startService>>[] = [];
const profilers: Profiler[] = [];
try {
  const database = await openDatabase(testDb.url);
  await migrate(database);
  await database.query('UPDATE plans SET quota_tokens = 1e15 WHERE id = $1', ['enterprise']);
  const userId = await ensureUser(database, 'bench-files@example.com');
  const newKeys = async (name: string) => {
    const keys: string[] = [];
    for (let r = 0; r < RUNS * 2 + 1; r++) {
      const orgId = await createOrganization(database, {
        name: `${name} files ${r}`,
        planId: 'enterprise',
        ownerId: userId,
      });
      await database.query('UPDATE organizations SET daily_budget_micros = 1e15, memory_enabled = true WHERE id = $1', [
        orgId,
      ]);
      keys.push((await issueApiKey(database, { userId, orgId, defaultPlan: 'enterprise', actor: 'operator' })).apiKey);
    }
    return keys;
  };
  const [backend] = await database.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const postmaster = postmasterOf(backend!.pid);

  const services: Service[] = [];
  const wanted: [Service['name'], string | undefined][] = [['current', undefined]];
  if (BASELINE) wanted.push(['baseline', BASELINE]);
  for (const [name, main] of wanted) {
    const port = await freePort();
    const inspectPort = PROFILE ? await freePort() : 0;
    const child = await startService({
      databaseUrl: testDb.url,
      port,
      ...(main ? { main } : {}),
      ...(PROFILE ? { nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`] } : {}),
      env: {
        RATE_LIMITS: unlimited(['/api/v1/translate/file']),
        DATABASE__POOL_MAX: '10',
        ...(fake
          ? {
              PROVIDER__KIND: 'openai',
              PROVIDER__BASE_URL: fake.url,
              PROVIDER__API_KEY: FAKE_API_KEY,
              PROVIDER__TIMEOUT_MS: '60000',
            }
          : {}),
      },
    });
    processes.push(child);
    services.push({
      name,
      main,
      pid: child.pid!,
      base: `http://127.0.0.1:${port}`,
      keys: await newKeys(name),
    });
    if (PROFILE) {
      // Closed before the services stop: a process with a debugger attached waits for it to leave before exiting.
      const profiler = await connectProfiler(inspectPort);
      profilers.push(profiler);
      services.at(-1)!.profiler = profiler;
    }
  }
  await database.close();

  // Each repetition translates other texts (an offset in every string), so its first run finds no cache warm.
  const files = {
    json: (r: number) => nestedJson(r * 10_000),
    xliff: (r: number) => xliff2(r * 10_000),
  };
  const profiles = new Map<string, CpuProfile[]>();

  async function once(
    service: Service,
    format: 'json' | 'xliff',
    apiKey: string,
    content: string,
    profileAs?: string,
  ): Promise<Run> {
    const body = JSON.stringify({ format, content, sourceLocale: 'en', targetLocale: 'pl', tier: 'cheap' });
    const calls0 = await metric(service.base, 'scriptorium_translation_provider_requests_total');
    if (profileAs) await service.profiler?.start();
    const cpu0 = threadCpuSeconds(service.pid);
    const pg0 = postgresCpuSeconds(postmaster);
    const t0 = performance.now();
    const res = await fetch(`${service.base}/api/v1/translate/file`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body,
    });
    const answer = (await res.json()) as { tokensIn: number; tokensOut: number; fromMemory: number; issues: unknown[] };
    const wallMs = performance.now() - t0;
    const serviceCpuMs = (threadCpuSeconds(service.pid) - cpu0) * 1000;
    const postgresCpuMs = (postgresCpuSeconds(postmaster) - pg0) * 1000;
    if (profileAs && service.profiler) {
      const list = profiles.get(profileAs) ?? [];
      list.push(await service.profiler.stop());
      profiles.set(profileAs, list);
    }
    if (res.status !== 200) throw new Error(`translate/file answered ${res.status}: ${JSON.stringify(answer)}`);
    const providerRequests = (await metric(service.base, 'scriptorium_translation_provider_requests_total')) - calls0;
    return {
      wallMs: round(wallMs),
      serviceCpuMs: round(serviceCpuMs),
      postgresCpuMs: round(postgresCpuMs),
      providerRequests,
      tokensIn: answer.tokensIn,
      tokensOut: answer.tokensOut,
      fromMemory: answer.fromMemory,
      issues: answer.issues.length,
    };
  }

  const loadBefore = loadavg()[0]!;
  const results = new Map<Service, Record<string, { first: Run[]; second: Run[] }>>(services.map((s) => [s, {}]));
  // A warm-up request (module loading, JIT) with other texts on an organization of its own, not counted.
  for (const service of services) await once(service, 'json', service.keys[RUNS * 2]!, nestedJson(1_000_000));
  for (const format of ['json', 'xliff'] as const) {
    for (const service of services) results.get(service)![format] = { first: [], second: [] };
    for (let r = 0; r < RUNS; r++) {
      const content = files[format](r);
      // With a baseline, the two services take turns going first.
      const order = r % 2 === 0 ? services : [...services].reverse();
      for (const service of order) {
        const key = service.keys[format === 'json' ? r : RUNS + r]!;
        const profileAs = `${service.name === 'baseline' ? 'baseline-' : ''}${format}`;
        const first = await once(service, format, key, content, `${profileAs}-first`);
        const second = await once(service, format, key, content, `${profileAs}-second`);
        results.get(service)![format]!.first.push(first);
        results.get(service)![format]!.second.push(second);
        console.log(
          `${services.length > 1 ? `${service.name} ` : ''}${format} run ${r + 1}: first ${first.wallMs} ms wall, ${first.serviceCpuMs} ms service CPU, ${first.postgresCpuMs} ms PostgreSQL CPU, ${first.providerRequests} provider requests; ` +
            `second ${second.wallMs} ms wall, ${second.serviceCpuMs} ms service CPU, ${second.postgresCpuMs} ms PostgreSQL CPU, ${second.providerRequests} provider requests, ${second.fromMemory} from memory`,
        );
      }
    }
  }
  const loadAfter = loadavg()[0]!;
  const summaryOf = (runs: Record<string, { first: Run[]; second: Run[] }>) =>
    Object.fromEntries(
      Object.entries(runs).map(([format, { first, second }]) => {
        const med = (list: Run[]) => ({
          wallMs: median(list.map((x) => x.wallMs)),
          serviceCpuMs: median(list.map((x) => x.serviceCpuMs)),
          postgresCpuMs: median(list.map((x) => x.postgresCpuMs)),
        });
        const f = med(first);
        const s = med(second);
        return [
          format,
          {
            first: {
              ...f,
              providerRequests: first[0]!.providerRequests,
              tokensIn: first[0]!.tokensIn,
              tokensOut: first[0]!.tokensOut,
            },
            second: {
              ...s,
              providerRequests: Math.max(...second.map((x) => x.providerRequests)),
              fromMemory: second[0]!.fromMemory,
            },
            serviceCpuRatio: round(f.serviceCpuMs / s.serviceCpuMs, 1),
            wallRatio: round(f.wallMs / s.wallMs, 1),
            met: {
              tenTimesLessServiceTime: f.serviceCpuMs >= 10 * s.serviceCpuMs,
              noProviderCalls: second.every((x) => x.providerRequests === 0 && x.tokensIn === 0 && x.tokensOut === 0),
            },
          },
        ];
      }),
    );
  const current = services[0]!;
  const baseline = services[1];
  const summary = summaryOf(results.get(current)!);
  const setup = {
    provider: fake
      ? `the fake OpenAI-compatible upstream, ${LATENCY_MS} ms per request`
      : 'pseudo (in the service process)',
    keys: KEYS,
    files: { jsonBytes: Buffer.byteLength(files.json(0)), xliffBytes: Buffer.byteLength(files.xliff(0)) },
    targetLocale: 'pl',
    runs: RUNS,
    serviceCpu: 'the scheduler run time of the service process threads (/proc/<pid>/task/*/schedstat)',
  };
  const machine = {
    cpus: cpus().length,
    model: cpus()[0]?.model,
    loadAverage: { before: loadBefore, after: loadAfter },
  };
  if (PROFILE) {
    // The profiled runs are slower than the timed ones: only where the time went is written.
    const where = Object.fromEntries(
      [...profiles].map(([name, list]) => {
        writeFileSync(
          join(root, `bench/results/translation-file-profile-${name}.cpuprofile`),
          JSON.stringify(
            relativeUrls(list.at(-1) as CpuProfile, [
              [root, ''],
              ...(BASELINE ? [[resolve(BASELINE, '../../../..'), 'baseline/'] as [string, string]] : []),
            ]),
          ),
        );
        return [name, summarize(list, 60)];
      }),
    );
    const out = 'bench/results/translation-file-profile.json';
    writeFileSync(
      join(root, out),
      `${JSON.stringify({ part: 'translation-file-profile', measuredAt: new Date().toISOString(), machine, setup, profiles: where }, null, 2)}\n`,
    );
    console.log(`load average ${loadBefore.toFixed(2)} → ${loadAfter.toFixed(2)}; ${out} and its .cpuprofile files`);
  } else {
    const result = {
      part: 'translation-file',
      measuredAt: new Date().toISOString(),
      machine,
      setup,
      summary,
      runs: results.get(current),
      ...(baseline
        ? {
            baseline: {
              service: 'the same route of another checkout (the code before), run alternately with this one',
              summary: summaryOf(results.get(baseline)!),
              runs: results.get(baseline),
            },
          }
        : {}),
    };
    writeFileSync(join(root, RESULTS), `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(baseline ? { current: summary, baseline: result.baseline!.summary } : summary, null, 2));
    console.log(`load average ${loadBefore.toFixed(2)} → ${loadAfter.toFixed(2)}; ${RESULTS}`);
  }
} finally {
  for (const profiler of profilers) profiler.close();
  for (const child of processes) await stopService(child);
  await fake?.close();
  await testDb.drop();
  await pg.stop();
}
