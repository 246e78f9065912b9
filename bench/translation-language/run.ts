// Translation language parts benchmark: pseudo-localization, validators, token estimates, and provider
// round trips against the fake upstream (zero latency). Bounded in count and time; prints figures and writes
// bench/results/translation-language.json. The app-level figures (req/s of POST /api/v1/translate) are in
// bench/translation.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { FAKE_API_KEY, startFakeAnthropic, startFakeOpenAI } from '@scriptorium/harness/translation-fakes';
import { createProvider, type ProviderRequest, pseudoLocalize } from '@scriptorium/translation/providers';
import { countTokens } from '@scriptorium/translation/tokens';
import { validateBatch } from '@scriptorium/translation/validators';

const quick = process.env.BENCH_QUICK === '1';
const budgetMs = quick ? 300 : 1_500;

const glossary = [
  { term: 'Scriptorium', target: null, neverTranslate: true },
  { term: 'settings', target: 'Einstellungen', neverTranslate: false },
];
const plain = 'Open the <b>settings</b> of Scriptorium to change %s for {{user}}';
const icu = 'You have {n, plural, one {# new message} other {# new messages}} in <b>{folder}</b>';
const req: ProviderRequest = {
  sourceLocale: 'en',
  targetLocale: 'ru',
  model: 'bench',
  style: { tone: 'friendly' },
  glossary,
  items: Array.from({ length: 10 }, (_, i) => ({ id: `k${i}`, text: i % 3 === 0 ? icu : plain, isIcu: i % 3 === 0 })),
};

/** Operations per second of `f`, run for about `budgetMs` after a warm-up. */
function rate(f: () => unknown): number {
  for (let i = 0; i < 200; i++) f();
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < budgetMs && n < 1_000_000) {
    for (let i = 0; i < 50; i++) f();
    n += 50;
    now = performance.now();
  }
  return Math.round((n / (now - start)) * 1000);
}

const translated = req.items.map((i) => ({
  id: i.id,
  source: i.text,
  isIcu: i.isIcu,
  target: pseudoLocalize(i.text, { isIcu: i.isIcu === true, targetLocale: 'ru', glossary }),
}));
const longText = `${plain} `.repeat(200);
const longTokens = countTokens(longText);

/** An OpenAI-compatible provider, for its estimate only (nothing is sent). */
const estimator = createProvider({ kind: 'openai', baseUrl: 'http://127.0.0.1:9', timeoutMs: 1000 });

const pure = {
  pseudo_plain_per_s: rate(() => pseudoLocalize(plain, { glossary })),
  pseudo_icu_per_s: rate(() => pseudoLocalize(icu, { isIcu: true, targetLocale: 'ru', glossary })),
  validate_batch_10_per_s: rate(() => validateBatch(translated, req)),
  // fresh item objects each time: the per-item token memo must not flatter the figure
  estimate_openai_10_per_s: rate(() =>
    estimator.estimateTranslate({ ...req, items: req.items.map((i) => ({ ...i })) }),
  ),
  tokens_per_s: rate(() => countTokens(longText)) * longTokens,
};

async function roundTrips(kind: 'openai' | 'anthropic') {
  const fake = kind === 'openai' ? await startFakeOpenAI() : await startFakeAnthropic();
  try {
    const provider = createProvider({ kind, baseUrl: fake.url, apiKey: FAKE_API_KEY, timeoutMs: 30_000 });
    for (let i = 0; i < 100; i++) await provider.translate(req); // warm-up: JIT, connections
    const total = quick ? 200 : 2_000;
    const latencies: number[] = [];
    let next = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < total && performance.now() - start < 20_000) {
          next++;
          const t = performance.now();
          await provider.translate(req);
          latencies.push(performance.now() - t);
        }
      }),
    );
    const elapsed = performance.now() - start;
    latencies.sort((a, b) => a - b);
    const pct = (p: number) =>
      Number((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0).toFixed(2));
    return {
      requests: latencies.length,
      req_per_s: Math.round((latencies.length / elapsed) * 1000),
      latency_ms: { p50: pct(0.5), p99: pct(0.99) },
    };
  } finally {
    await fake.close();
  }
}

const result = {
  machine: { cpus: cpus().length, loadavg_1m: Number(loadavg()[0]?.toFixed(2)) },
  batch: '10 items (4 ICU plurals, 6 with tag/printf/mustache), glossary of 2, en→ru',
  pure,
  round_trip_openai_fake: await roundTrips('openai'),
  round_trip_anthropic_fake: await roundTrips('anthropic'),
  note: 'client (provider) and fake upstream share one process; concurrency 16',
};
console.log(JSON.stringify(result, null, 2));
const out = join(import.meta.dirname, '..', 'results');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'translation-language.json'), `${JSON.stringify(result, null, 2)}\n`);
