// The translation memory: opt-in per organization (off by default: zero retention). When on, translations that
// passed the validators, approved and edited review results and TMX imports are kept per organization and locale
// pair; an exact match (same ICU-normalized source, same context, same locale pair) is answered from it without a
// provider call. Nothing is ever read across organizations: every statement is scoped by `org_id`. Turning the
// memory off deletes it in the same transaction, and a store checks the switch under a row lock, so nothing written
// concurrently outlives an off. Every change moves the organization's memory generation and deletes its file answers
// (`memory-files.ts`: a whole file the memory answers, valid at one generation).
import { hash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/index.ts';
import { badRequest, conflict } from '../errors.ts';
import { buildTmx, FileParseError, normalizeIcu, parseTmx, type TmxEntry } from '../files/index.ts';
import { audit } from './audit.ts';
import type { Actor } from './orgs.ts';
import { authorize } from './roles.ts';

/** A string to look up or store. */
export interface MemoryText {
  text: string;
  isIcu?: boolean | undefined;
  context?: string | undefined;
  /** Its `memoryKey`, when the caller has it already. */
  key?: string | undefined;
}

export type MemoryOrigin = 'translation' | 'review' | 'import';

/** A locale tag in its canonical spelling (`pt-br` → `pt-BR`), so pairs match however the client spells them. */
export function canonicalLocale(locale: string): string {
  try {
    return Intl.getCanonicalLocales(locale)[0] ?? locale;
  } catch {
    return locale;
  }
}

/**
 * The exact-match key of a source: SHA-256 (hex) of its kind, its ICU-normalized text (NFC; ICU printed in one
 * spelling) and its context.
 * @example memoryKey({ text: '{n,plural,one{# file}other{# files}}', isIcu: true }) === memoryKey({ text: '{n, plural, one {# file} other {# files}}', isIcu: true })
 */
export function memoryKey(t: MemoryText): string {
  const text = t.isIcu ? normalizeIcu(t.text) : t.text.normalize('NFC');
  return hash('sha256', `${t.isIcu ? 'icu' : 'text'}\u0000${text}\u0000${(t.context ?? '').normalize('NFC')}`, 'hex');
}

/** A stored translation and where it came from. */
export interface Recalled {
  text: string;
  origin: MemoryOrigin;
}

/** What `recall` found: the hits by index in the items, every item's key, and the generation they were read at. */
export interface Recall {
  hits: Map<number, Recalled>;
  keys: string[];
  generation: number;
}

/** The stored translations of `items` (by index in `items`), for one organization and locale pair. */
export async function recall(
  database: Database,
  orgId: string,
  sourceLocale: string,
  targetLocale: string,
  items: MemoryText[],
): Promise<Recall> {
  const found = new Map<number, Recalled>();
  const keys = items.map((t) => t.key ?? memoryKey(t));
  const unique = [...new Set(keys)];
  // A join from the keys (the primary key's lookups, one per key): a plan that stays right when the statement is
  // prepared once and planned generically, whatever the table's size. The hits come back as one JSON array (one
  // value to read, not a row each) of [position of the key in `unique`, target, origin, whether the entry's last
  // use is a day old], with the memory's generation read in the same snapshot.
  const [row] = await database.query<{
    hits: [number, string, MemoryOrigin, boolean][] | null;
    generation: string | number | null;
  }>(
    `SELECT json_agg(json_build_array(x.i, m.target_text, m.origin, m.last_used_at < now() - interval '1 day')) AS hits,
            (SELECT memory_generation FROM organizations WHERE id = $1) AS generation
       FROM unnest($4::text[]) WITH ORDINALITY AS x(h, i)
       JOIN translation_memory m
         ON m.org_id = $1 AND m.source_locale = $2 AND m.target_locale = $3 AND m.key_hash = decode(x.h, 'hex')`,
    [orgId, canonicalLocale(sourceLocale), canonicalLocale(targetLocale), unique],
    'memory_recall_generation',
  );
  const hits = row?.hits ?? [];
  const result = { hits: found, keys, generation: Number(row?.generation ?? -1) };
  if (hits.length === 0) return result;
  const byKey = new Map<string, Recalled>();
  const stale: string[] = [];
  for (const [i, text, origin, old] of hits) {
    const key = unique[i - 1]!;
    byKey.set(key, { text, origin });
    if (old) stale.push(key);
  }
  keys.forEach((k, i) => {
    const hit = byKey.get(k);
    if (hit !== undefined) found.set(i, hit);
  });
  // Retention counts from the last use: refreshed at most once a day per entry (a second statement only then).
  if (stale.length > 0)
    await database.query(
      `UPDATE translation_memory m SET last_used_at = now()
         FROM unnest($4::text[]) AS x(h)
        WHERE m.org_id = $1 AND m.source_locale = $2 AND m.target_locale = $3 AND m.key_hash = decode(x.h, 'hex')
          AND m.last_used_at < now() - interval '1 day'`,
      [orgId, canonicalLocale(sourceLocale), canonicalLocale(targetLocale), stale],
      'memory_touch',
    );
  return result;
}

/** What `remember` did: entries written, and the memory generation after it (null: the memory is off). */
export interface Remembered {
  written: number;
  generation: number | null;
}

/**
 * Stores translations for `orgId` if (and only while) its memory is on. A provider's translation never replaces a
 * reviewed or imported one. A store moves the memory generation by one and deletes the organization's file answers.
 */
export async function remember(
  database: Database,
  orgId: string,
  pair: { sourceLocale: string; targetLocale: string },
  entries: (MemoryText & { target: string })[],
  origin: MemoryOrigin,
  createdBy: string | null,
): Promise<Remembered> {
  const unique = new Map<string, MemoryText & { target: string }>();
  for (const e of entries) if (e.target.trim() !== '') unique.set(e.key ?? memoryKey(e), e);
  if (unique.size === 0) return { written: 0, generation: null };
  const list = [...unique];
  // The generation's row lock orders stores of one organization among themselves and after an off (which holds it
  // FOR UPDATE); the memory checked on under it.
  const rows = await database.query<{ n: number; generation: string | number | null }>(
    `WITH o AS (UPDATE organizations SET memory_generation = memory_generation + 1 WHERE id = $1 AND memory_enabled
                RETURNING id, memory_generation),
          f AS (DELETE FROM translation_memory_files WHERE org_id IN (SELECT id FROM o)),
          w AS (
       INSERT INTO translation_memory
              (org_id, source_locale, target_locale, key_hash, source_text, context, is_icu, target_text, origin, created_by)
       SELECT o.id, $2, $3, decode(u.h, 'hex'), u.s, u.c, u.i, u.t, $4, $5
         FROM o, unnest($6::text[], $7::text[], $8::text[], $9::bool[], $10::text[]) AS u(h, s, c, i, t)
       ON CONFLICT (org_id, source_locale, target_locale, key_hash) DO UPDATE
          SET target_text = EXCLUDED.target_text, origin = EXCLUDED.origin, created_by = EXCLUDED.created_by,
              last_used_at = now()
        WHERE EXCLUDED.origin <> 'translation' OR translation_memory.origin = 'translation'
       RETURNING 1)
     SELECT (SELECT count(*)::int FROM w) AS n, (SELECT memory_generation FROM o) AS generation`,
    [
      orgId,
      canonicalLocale(pair.sourceLocale),
      canonicalLocale(pair.targetLocale),
      origin,
      createdBy,
      list.map(([k]) => k),
      list.map(([, e]) => e.text),
      list.map(([, e]) => e.context ?? null),
      list.map(([, e]) => e.isIcu === true),
      list.map(([, e]) => e.target),
    ],
  );
  const generation = rows[0]?.generation;
  return { written: Number(rows[0]?.n ?? 0), generation: generation == null ? null : Number(generation) };
}

export interface MemoryStatus {
  enabled: boolean;
  entries: number;
}

async function status(database: Database, orgId: string): Promise<MemoryStatus> {
  const [row] = await database.query<{ enabled: boolean; entries: number }>(
    `SELECT o.memory_enabled AS enabled,
            (SELECT count(*)::int FROM translation_memory m WHERE m.org_id = o.id) AS entries
       FROM organizations o WHERE o.id = $1`,
    [orgId],
  );
  return { enabled: row?.enabled === true, entries: Number(row?.entries ?? 0) };
}

/** Whether the memory is on and how many entries it holds (members). */
export async function memoryStatus(ctx: AppContext, actor: Actor, orgId: string): Promise<MemoryStatus> {
  await authorize(ctx.database, orgId, actor.userId, 'memory.read');
  return status(ctx.database, orgId);
}

/** Turns the memory on or off (admins); off deletes every entry in the same transaction. Audited. */
export async function setMemory(ctx: AppContext, actor: Actor, orgId: string, enabled: boolean): Promise<MemoryStatus> {
  await authorize(ctx.database, orgId, actor.userId, 'memory.manage');
  await ctx.database.db.transaction(async (tx) => {
    const rows = async <T>(q: ReturnType<typeof sql>) => ((await tx.execute(q)) as unknown as { rows: T[] }).rows;
    // The row lock orders this against concurrent stores (they hold FOR SHARE on the same row).
    const [before] = await rows<{ enabled: boolean }>(
      sql`SELECT memory_enabled AS enabled FROM organizations WHERE id = ${orgId} FOR UPDATE`,
    );
    if (before?.enabled === enabled) return;
    await tx.execute(
      sql`UPDATE organizations SET memory_enabled = ${enabled}, memory_generation = memory_generation + 1
           WHERE id = ${orgId}`,
    );
    let deleted = 0;
    let deletedFiles = 0;
    if (!enabled) {
      const [d] = await rows<{ n: number; files: number }>(
        sql`WITH d AS (DELETE FROM translation_memory WHERE org_id = ${orgId} RETURNING 1),
                 f AS (DELETE FROM translation_memory_files WHERE org_id = ${orgId} RETURNING 1)
            SELECT (SELECT count(*)::int FROM d) AS n, (SELECT count(*)::int FROM f) AS files`,
      );
      deleted = Number(d?.n ?? 0);
      deletedFiles = Number(d?.files ?? 0);
    }
    await audit(tx, {
      actorUserId: actor.userId,
      actorKind: 'user',
      orgId,
      action: enabled ? 'memory.enable' : 'memory.disable',
      target: orgId,
      requestId: actor.requestId ?? null,
      meta: enabled ? {} : { deletedEntries: deleted, deletedFileAnswers: deletedFiles },
    });
  });
  return status(ctx.database, orgId);
}

const ENTRY_COLUMNS = `source_locale AS "sourceLocale", target_locale AS "targetLocale", source_text AS source,
  target_text AS target, context, is_icu AS "isIcu", to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "createdAt"`;

/** The whole memory as TMX 1.4b (admins). Audited (it holds the organization's texts). */
export async function exportTmx(ctx: AppContext, actor: Actor, orgId: string): Promise<string> {
  await authorize(ctx.database, orgId, actor.userId, 'memory.manage');
  const entries = await ctx.database.query<TmxEntry>(
    `SELECT ${ENTRY_COLUMNS} FROM translation_memory WHERE org_id = $1
      ORDER BY source_locale, target_locale, source_text, key_hash`,
    [orgId],
  );
  await audit(ctx.database.db, {
    actorUserId: actor.userId,
    actorKind: 'user',
    orgId,
    action: 'memory.export',
    target: orgId,
    requestId: actor.requestId ?? null,
    meta: { entries: entries.length },
  });
  return buildTmx(entries, '1.0.0');
}

const IMPORT_BATCH = 5_000;

/** Imports a TMX document into the memory (admins; 409 while the memory is off). Entries with the same key are replaced. */
export async function importTmx(
  ctx: AppContext,
  actor: Actor,
  orgId: string,
  document: string,
): Promise<{ imported: number; skipped: number; entries: number }> {
  await authorize(ctx.database, orgId, actor.userId, 'memory.manage');
  let entries: TmxEntry[];
  try {
    entries = parseTmx(document);
  } catch (e) {
    if (e instanceof FileParseError) throw badRequest(`TMX does not parse: line ${e.line}: ${e.reason}`);
    throw badRequest('TMX does not parse');
  }
  if (!(await status(ctx.database, orgId)).enabled) throw conflict('the translation memory is off: turn it on first');
  const groups = new Map<string, TmxEntry[]>();
  let skipped = 0;
  for (const e of entries) {
    if (e.source.trim() === '' || e.target.trim() === '' || e.source.length > 10_000 || e.target.length > 10_000) {
      skipped++;
      continue;
    }
    const pair = `${canonicalLocale(e.sourceLocale)}\u0000${canonicalLocale(e.targetLocale)}`;
    const group = groups.get(pair);
    if (group) group.push(e);
    else groups.set(pair, [e]);
  }
  let imported = 0;
  for (const [pair, list] of groups) {
    const [sourceLocale, targetLocale] = pair.split('\u0000') as [string, string];
    // Statements of at most IMPORT_BATCH entries (a large memory is not one giant statement).
    for (let i = 0; i < list.length; i += IMPORT_BATCH) {
      const { written } = await remember(
        ctx.database,
        orgId,
        { sourceLocale, targetLocale },
        list
          .slice(i, i + IMPORT_BATCH)
          .map((e) => ({ text: e.source, isIcu: e.isIcu === true, context: e.context ?? undefined, target: e.target })),
        'import',
        actor.userId,
      );
      imported += written;
    }
  }
  await audit(ctx.database.db, {
    actorUserId: actor.userId,
    actorKind: 'user',
    orgId,
    action: 'memory.import',
    target: orgId,
    requestId: actor.requestId ?? null,
    meta: { imported, skipped },
  });
  return { imported, skipped, entries: (await status(ctx.database, orgId)).entries };
}

/** The entries the person contributed (privacy export), in every organization. */
export async function memoryEntriesBy(database: Database, userId: string): Promise<Record<string, unknown>[]> {
  return database.query(
    `SELECT org_id AS "orgId", origin, ${ENTRY_COLUMNS} FROM translation_memory WHERE created_by = $1
      ORDER BY created_at, key_hash`,
    [userId],
  );
}
