// File answers of the translation memory. When the memory answers every string of a locale file exactly (the run
// after the file was translated, or any run answered from the memory in full), the translated file is kept as one
// answer, keyed by a digest of the organization, the file's bytes, its format, the locale pair and every parameter
// that changes the output, and valid only at the memory generation it was made at: any change of the memory (a
// store, a review, an import, turning it off, retention) moves the generation and deletes the organization's file
// answers. The next identical request is then answered without parsing the file, looking up its strings or writing
// it back — still 0 tokens, `fromMemory`, and nothing metered, exactly like a call the memory answers string by
// string. They are part of the memory: stored only while it is on, under the same organization row lock a store
// takes; deleted with it; in the privacy export; counted by retention.
import { createHash } from 'node:crypto';
import type { Database } from '../db/index.ts';
import type { FileFormat } from '../files/index.ts';
import { canonicalLocale } from './memory.ts';

/**
 * Moves when a parser or writer changes what it writes for the same file (`src/files/output-digest.test.ts` pins what
 * they write: a new digest there means a new version here), so answers made before stop matching.
 */
const FILE_ANSWER_VERSION = 1;

/** Everything a file's answer depends on besides the memory itself. */
export interface FileAnswerKey {
  orgId: string;
  format: FileFormat;
  content: string;
  sourceLocale: string;
  targetLocale: string;
  tier: string;
  modelOverride: string | undefined;
  /** The model sent upstream and the one reported (a configuration change is another answer). */
  upstreamModel: string;
  reportedModel: string;
  style: unknown;
  glossary: unknown;
}

/**
 * The digest (SHA-256) a file answer is stored under: the parameters as JSON, a NUL, then the file's text.
 * @example const digest = fileAnswerDigest({ orgId, format: 'json', content, sourceLocale: 'en', targetLocale: 'pl', tier: 'cheap', modelOverride: undefined, upstreamModel: 'm', reportedModel: 'm', style: {}, glossary: [] });
 */
export function fileAnswerDigest(k: FileAnswerKey): Buffer {
  const params = [
    FILE_ANSWER_VERSION,
    k.orgId,
    k.format,
    k.sourceLocale,
    k.targetLocale,
    k.tier,
    k.modelOverride ?? null,
    k.upstreamModel,
    k.reportedModel,
    k.style,
    k.glossary,
  ];
  // JSON never holds a raw NUL: the parameters end unambiguously where the file begins.
  return createHash('sha256').update(JSON.stringify(params)).update('\u0000').update(k.content).digest();
}

/** What a file answer holds: the `content`, `issues` and `fromMemory` of the route's answer, as JSON text. */
export interface FileAnswerBody {
  content: string;
  issues: unknown[];
  fromMemory: number;
}

/**
 * A file answer's JSON from its parts, the content already JSON (the call that makes the answer encodes its own
 * reply's content once for both).
 */
export function fileAnswerBodyJson(contentJson: string, issues: unknown[], fromMemory: number): string {
  return `{"content":${contentJson},"issues":${JSON.stringify(issues)},"fromMemory":${fromMemory}}`;
}

/** A stored answer: its JSON (an object) in UTF-8, and whether its last use is a day old. */
export interface FileAnswerHit {
  json: Buffer;
  stale: boolean;
}

/** The answer stored under `digest` at the organization's current generation, while its memory is on. */
export async function recallFile(
  database: Database,
  orgId: string,
  digest: Buffer,
): Promise<FileAnswerHit | undefined> {
  const [row] = await database.query<{ answer: Uint8Array; stale: boolean }>(
    `SELECT f.answer, f.last_used_at < now() - interval '1 day' AS stale
       FROM translation_memory_files f JOIN organizations o ON o.id = f.org_id
      WHERE f.org_id = $1 AND f.digest = $2 AND o.memory_enabled AND f.generation = o.memory_generation`,
    [orgId, digest],
    'memory_file_recall',
  );
  return row ? { json: asBuffer(row.answer), stale: row.stale } : undefined;
}

/**
 * Retention counts from the last use, as for a string the memory answers: at most once a day, the answer's and its
 * entries' last use move to now.
 */
export async function touchFile(database: Database, orgId: string, digest: Buffer): Promise<void> {
  await database.query(
    `WITH f AS (UPDATE translation_memory_files SET last_used_at = now()
                 WHERE org_id = $1 AND digest = $2 RETURNING source_locale, target_locale, entry_keys)
     UPDATE translation_memory m SET last_used_at = now()
       FROM f, generate_series(0, length(f.entry_keys) / 32 - 1) AS i
      WHERE m.org_id = $1 AND m.source_locale = f.source_locale AND m.target_locale = f.target_locale
        AND m.key_hash = substring(f.entry_keys FROM i * 32 + 1 FOR 32)
        AND m.last_used_at < now() - interval '1 day'`,
    [orgId, digest],
  );
}

/**
 * Stores a file answer made at `generation`, if the organization's memory is still on and still at that generation
 * (checked under the row lock an off and a store take, so nothing written concurrently outlives either). Returns
 * whether it was stored.
 */
export async function rememberFile(
  database: Database,
  orgId: string,
  digest: Buffer,
  generation: number,
  file: { format: FileFormat; sourceLocale: string; targetLocale: string; entryKeys: string[] },
  /** `fileAnswerBodyJson` of the answer. */
  answerJson: string,
  createdBy: string | null,
): Promise<boolean> {
  const keys = Buffer.from(file.entryKeys.join(''), 'hex');
  const [row] = await database.query<{ n: number }>(
    `WITH o AS (SELECT id FROM organizations WHERE id = $1 AND memory_enabled AND memory_generation = $3 FOR SHARE),
          w AS (
       INSERT INTO translation_memory_files
              (org_id, digest, generation, format, source_locale, target_locale, answer, entry_keys, created_by)
       SELECT o.id, $2, $3, $4, $5, $6, $7, $8, $9 FROM o
       ON CONFLICT (org_id, digest) DO UPDATE
          SET generation = EXCLUDED.generation, answer = EXCLUDED.answer, entry_keys = EXCLUDED.entry_keys,
              created_by = EXCLUDED.created_by, created_at = now(), last_used_at = now()
       RETURNING 1)
     SELECT count(*)::int AS n FROM w`,
    [
      orgId,
      digest,
      generation,
      file.format,
      canonicalLocale(file.sourceLocale),
      canonicalLocale(file.targetLocale),
      Buffer.from(answerJson),
      keys,
      createdBy,
    ],
  );
  return Number(row?.n ?? 0) > 0;
}

/**
 * The answer as the route sends it, in UTF-8: the stored JSON with the format, the model and 0 tokens in front (the
 * stored bytes are copied, never decoded and encoded again).
 */
export function fileAnswerJson(hit: FileAnswerHit, format: FileFormat, model: string): Buffer {
  const head = `{"format":${JSON.stringify(format)},"model":${JSON.stringify(model)},"tokensIn":0,"tokensOut":0,`;
  return Buffer.concat([Buffer.from(head), hit.json.subarray(1)]);
}

/** bytea as the drivers give it: a Buffer (pg) or a Uint8Array (PGlite). */
const asBuffer = (v: Uint8Array): Buffer =>
  Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** The file answers made by the person's calls (privacy export), in every organization: the translated files. */
export async function fileAnswersBy(database: Database, userId: string): Promise<Record<string, unknown>[]> {
  const rows = await database.query<Record<string, unknown> & { answer: Uint8Array }>(
    `SELECT org_id AS "orgId", format, source_locale AS "sourceLocale", target_locale AS "targetLocale", answer,
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "createdAt",
            to_char(last_used_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "lastUsedAt"
       FROM translation_memory_files WHERE created_by = $1 ORDER BY created_at, digest`,
    [userId],
  );
  return rows.map(({ answer, ...row }) => {
    const { content, issues, fromMemory } = JSON.parse(asBuffer(answer).toString('utf8')) as FileAnswerBody;
    return { ...row, content, issues, fromMemory };
  });
}
