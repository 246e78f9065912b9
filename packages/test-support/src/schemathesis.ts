// Runs schemathesis, the OpenAPI-driven fuzzer (PyPI; tools/schemathesis/build.sh installs it into the cache), against
// a running service's own OpenAPI document, with a fixed seed and a bounded number of examples per operation.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..');

/**
 * What every run checks: no 5xx; every status and header one the document declares for the operation, with a
 * content type and a body matching its schema; a method the path does not have is 405 with Allow.
 */
export const FUZZ_CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_headers_conformance',
  'response_schema_conformance',
  'unsupported_method',
] as const;

export interface FuzzOptions {
  /** The document's URL (`http://127.0.0.1:PORT/openapi.json`). */
  schemaUrl: string;
  /** The API's base URL. */
  baseUrl: string;
  /** Headers sent with every request (credentials). */
  headers?: Record<string, string>;
  /**
   * The run's seed: 24 unless set here, or by FUZZ_SEED in the environment (to explore beyond the fixed run);
   * FUZZ_REPORT=FILE keeps the full report.
   */
  seed?: number;
  /** Most test cases per operation and phase. */
  maxExamples?: number;
  /** Operations left out (`--exclude-operation-id`). */
  excludeOperationIds?: string[];
  /** Only these operations (`--include-operation-id`). */
  includeOperationIds?: string[];
  /** Concurrent workers: 1 by default (Python 3.11's ast module is not thread-safe, and hypothesis parses lambdas' source). */
  workers?: number;
}

export interface FuzzResult {
  ok: boolean;
  /** schemathesis's report: failures with the request that reproduces each (`curl`). */
  output: string;
  /** Its closing line (`… passed … in 9.1s`), for the test log. */
  summary: string;
}

const summaryOf = (output: string): string => {
  const lines = output.split('\n').map((line) => line.trim());
  const cases = lines.find((line) => /^\d+ generated/.test(line)) ?? '';
  const closing = lines.filter((line) => /^=+ .* =+$/.test(line)).at(-1) ?? '';
  return [cases, closing.replace(/^=+ | =+$/g, '')].filter(Boolean).join('; ');
};

/** The `st` executable, installed (or found cached) by the build recipe. */
export async function schemathesisBinary(): Promise<string> {
  const { stdout } = await run('bash', [join(ROOT, 'tools', 'schemathesis', 'build.sh')], {
    maxBuffer: 1 << 20,
  });
  return stdout.trim().split('\n').at(-1) ?? '';
}

/**
 * Fuzzes the API described at `schemaUrl`; resolves with schemathesis's verdict and report (it never rejects on
 * failures, so that the test prints them).
 * @example const r = await fuzz({ schemaUrl: `${base}/openapi.json`, baseUrl: base }); expect(r.ok, r.output).toBe(true);
 */
export async function fuzz(options: FuzzOptions): Promise<FuzzResult> {
  const st = await schemathesisBinary();
  const args = [
    'run',
    options.schemaUrl,
    '--url',
    options.baseUrl,
    '--checks',
    FUZZ_CHECKS.join(','),
    '--seed',
    String(options.seed ?? (Number(process.env.FUZZ_SEED) || 24)),
    '--max-examples',
    String(options.maxExamples ?? 10),
    '--workers',
    String(options.workers ?? 1),
    '--phases',
    'examples,coverage,fuzzing',
    '--no-shrink',
    '--suppress-health-check',
    'all',
    '--request-timeout',
    '20',
    '--output-truncate',
    'true',
  ];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('--header', `${name}: ${value}`);
  for (const id of options.excludeOperationIds ?? []) args.push('--exclude-operation-id', id);
  for (const id of options.includeOperationIds ?? []) args.push('--include-operation-id', id);
  // schemathesis keeps its own state (.schemathesis/) in its working folder: a temporary one, not the checkout.
  const cwd = mkdtempSync(join(tmpdir(), 'schemathesis-'));
  try {
    const { stdout, stderr } = await run(st, args, {
      cwd,
      maxBuffer: 16 << 20,
      env: { ...process.env, NO_COLOR: '1', SCHEMATHESIS_TELEMETRY: 'false', COLUMNS: '160' },
    });
    const output = stdout + stderr;
    if (process.env.FUZZ_REPORT) writeFileSync(process.env.FUZZ_REPORT, output);
    return { ok: true, output, summary: summaryOf(output) };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    const output = `${e.stdout ?? ''}${e.stderr ?? e.message}`;
    if (process.env.FUZZ_REPORT) writeFileSync(process.env.FUZZ_REPORT, output);
    return { ok: false, output, summary: summaryOf(output) };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}
