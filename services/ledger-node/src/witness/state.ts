// The witness's memory: per log, the checkpoint it cosigned last (size, root), and the conflicting checkpoints it
// was shown (the evidence of a split view or a fork). One JSON file, replaced atomically (temp file, fsync,
// rename, fsync of the folder) before any answer that depends on it. A file that cannot be read stops the start:
// starting empty would let the witness cosign a rolled-back history.
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fromBase64, toBase64 } from '@scriptorium/ledger-protocol';
import { z } from 'zod';
import type { LogHead } from './core.ts';

const MAX_CONFLICTS = 32;

const StateFile = z.strictObject({
  version: z.literal(1),
  logs: z.record(z.string(), z.strictObject({ size: z.int().min(0), root: z.string(), cosigned_at: z.int().min(0) })),
  conflicts: z
    .array(
      z.strictObject({
        at: z.int(),
        origin: z.string(),
        size: z.int(),
        known_size: z.int(),
        known_root: z.string(),
        reason: z.string(),
        note: z.string(),
      }),
    )
    .max(MAX_CONFLICTS),
});
type StateFile = z.infer<typeof StateFile>;

export type Conflict = StateFile['conflicts'][number];

export class WitnessState {
  private data: StateFile;
  private readonly file: string;

  private constructor(file: string, data: StateFile) {
    this.file = file;
    this.data = data;
  }

  /** Opens the state file, or starts empty when there is none; throws when it exists and cannot be read. */
  static open(file: string): WitnessState {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        return new WitnessState(file, { version: 1, logs: {}, conflicts: [] });
      throw new Error(`witness state ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`witness state ${file} is not JSON: refusing to start (a lost state could cosign a rollback)`);
    }
    const parsed = StateFile.safeParse(json);
    if (!parsed.success) throw new Error(`witness state ${file} is not a witness state: refusing to start`);
    for (const [origin, head] of Object.entries(parsed.data.logs)) {
      const root = fromBase64(head.root);
      if (root?.length !== 32) throw new Error(`witness state ${file}: log ${origin} has no valid root`);
    }
    return new WitnessState(file, parsed.data);
  }

  head(origin: string): LogHead | undefined {
    const h = this.data.logs[origin];
    return h ? { size: h.size, root: fromBase64(h.root) as Uint8Array } : undefined;
  }

  heads(): Array<{ origin: string; size: number; root: string; cosignedAt: number }> {
    return Object.entries(this.data.logs).map(([origin, h]) => ({
      origin,
      size: h.size,
      root: h.root,
      cosignedAt: h.cosigned_at,
    }));
  }

  get conflicts(): readonly Conflict[] {
    return this.data.conflicts;
  }

  /** Records a new head for `origin`, durably (returns when the file is on disk). */
  advance(origin: string, size: number, root: Uint8Array, at: number): void {
    const next: StateFile = {
      ...this.data,
      logs: { ...this.data.logs, [origin]: { size, root: toBase64(root), cosigned_at: at } },
    };
    this.write(next);
    this.data = next;
  }

  /** Keeps a conflicting checkpoint (the newest MAX_CONFLICTS), durably. */
  recordConflict(conflict: Conflict): void {
    const next: StateFile = { ...this.data, conflicts: [...this.data.conflicts, conflict].slice(-MAX_CONFLICTS) };
    this.write(next);
    this.data = next;
  }

  private write(data: StateFile): void {
    const temp = `${this.file}.tmp`;
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeFileSync(fd, `${JSON.stringify(data, null, 1)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, this.file);
    const dir = openSync(dirname(this.file), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  }
}
