import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  formatAddCheckpoint,
  LogTree,
  logSignedCheckpoint,
  logVerifierKey,
  toBase64,
  verifySignature,
} from '@scriptorium/ledger-protocol';
import { createSigner, keyPairFromSeed } from '@scriptorium/ledger-protocol/keys';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { decide, followedLogs, type LogHead } from './core.ts';
import { WitnessState } from './state.ts';

const ORIGIN = 'scriptorium.dev/ledger/witness-test';
const signer = (i: number) => createSigner(keyPairFromSeed(new Uint8Array(32).fill(i)).privateKey);
const validators = [1, 2, 3, 4].map(signer);
const logs = followedLogs([{ origin: ORIGIN, keys: validators.map((v) => logVerifierKey(ORIGIN, v.publicKey).text) }]);
const encoder = new TextEncoder();

function treeOf(n: number, salt = 'a'): LogTree {
  const t = new LogTree();
  for (let i = 0; i < n; i++) t.appendData(encoder.encode(`${salt}${i}`));
  return t;
}
const note = (tree: LogTree, size: number, by = validators.slice(0, 3), origin = ORIGIN) =>
  logSignedCheckpoint(
    origin,
    size,
    tree.root(size),
    by.map((v) => [v.publicKey, (m: Uint8Array) => v.sign(m)] as const),
  );
const body = (old: number, proof: Uint8Array[], checkpoint: string) =>
  encoder.encode(formatAddCheckpoint({ oldSize: old, proof, checkpoint }));

describe("the witness's decision (tlog-witness)", () => {
  const tree = treeOf(20);
  let head: LogHead | undefined;
  const judge = (b: Uint8Array) => decide(b, logs, () => head, verifySignature);

  it('cosigns a first checkpoint from size 0, then one that extends it with a consistency proof', () => {
    const first = judge(body(0, [], note(tree, 5)));
    expect(first).toMatchObject({ status: 200, size: 5, unchanged: false });
    head = { size: 5, root: tree.root(5) };
    expect(judge(body(5, tree.consistency(5, 12), note(tree, 12)))).toMatchObject({ status: 200, size: 12 });
    head = { size: 12, root: tree.root(12) };
    // The same checkpoint again: cosigned again, nothing changes.
    expect(judge(body(12, [], note(tree, 12)))).toMatchObject({ status: 200, unchanged: true });
  });

  it('409 with its size for a stale old size (a client that does not know it yet)', () => {
    expect(judge(body(5, tree.consistency(5, 15), note(tree, 15)))).toEqual({ status: 409, knownSize: 12 });
    expect(judge(body(0, [], note(tree, 15)))).toEqual({ status: 409, knownSize: 12 });
  });

  it('never two roots for one size: another history of the same size is refused and kept as evidence', () => {
    const other = treeOf(20, 'b');
    const split = judge(body(12, [], note(other, 12)));
    expect(split).toMatchObject({
      status: 409,
      conflict: { size: 12, knownSize: 12, knownRoot: toBase64(tree.root(12)) },
    });
  });

  it('refuses a checkpoint that does not extend the one it cosigned (a rewrite with the same keys): 422', () => {
    const other = treeOf(20, 'b');
    const fork = judge(body(12, other.consistency(12, 16), note(other, 16)));
    expect(fork).toMatchObject({ status: 422, conflict: { size: 16, knownSize: 12 } });
    // A proof of the right history for another checkpoint's root is refused too.
    expect(judge(body(12, tree.consistency(12, 16), note(other, 16))).status).toBe(422);
    expect(judge(body(12, tree.consistency(12, 16).slice(1), note(tree, 16))).status).toBe(422);
  });

  it('signatures: a quorum of the known keys; a bad signature of a known key is a refusal; strangers do not count', () => {
    const stranger = signer(9);
    expect(judge(body(12, tree.consistency(12, 16), note(tree, 16, validators.slice(0, 2))))).toMatchObject({
      status: 403,
      message: expect.stringMatching(/2 valid signatures .* wants 3/),
    });
    expect(
      judge(body(12, tree.consistency(12, 16), note(tree, 16, [...validators.slice(0, 2), stranger]))).status,
    ).toBe(403);
    const good = note(tree, 16);
    const [text, sigs] = good.split('\n\n') as [string, string];
    const lines = sigs.trimEnd().split('\n');
    const tampered = `${text}\n\n${lines.map((l, i) => (i === 0 ? `${l.slice(0, -4)}AAA=` : l)).join('\n')}\n`;
    expect(judge(body(12, tree.consistency(12, 16), tampered))).toMatchObject({
      status: 403,
      message: /does not verify/,
    });
    expect(
      judge(body(12, tree.consistency(12, 16), note(tree, 16, [...validators.slice(0, 3), stranger]))).status,
    ).toBe(200);
  });

  it('400, 404: malformed bodies, an old size above the checkpoint, a proof from 0, an unknown log', () => {
    expect(judge(body(40, [], note(tree, 16))).status).toBe(400);
    expect(decide(body(0, [tree.root(1)], note(tree, 3)), logs, () => undefined, verifySignature).status).toBe(400);
    expect(judge(body(12, [], note(tree, 12, validators.slice(0, 3), 'example.com/unknown')))).toMatchObject({
      status: 404,
    });
    expect(judge(encoder.encode('old 12\n\nnot a checkpoint\n')).status).toBe(400);
    expect(judge(encoder.encode('garbage')).status).toBe(400);
  });

  it('fuzz: random and mutated bodies get an answer, never an exception, and never a cosignature unless valid', () => {
    const valid = body(12, tree.consistency(12, 16), note(tree, 16));
    // Everything before the signature lines is ASCII: string and byte offsets agree up to there.
    const signaturesStart = new TextDecoder().decode(valid).lastIndexOf('\n\n') + 2;
    fc.assert(
      fc.property(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 }), (at, value) => {
        const mutated = Uint8Array.from(valid);
        if (mutated[at] === value) return;
        mutated[at] = value;
        const d = judge(mutated);
        // A change anywhere in the proof, the checkpoint text or a signature must not be cosigned; a change in the
        // signature lines' names or padding may still leave a valid quorum (lines of other keys are ignored).
        if (d.status === 200) expect(at).toBeGreaterThanOrEqual(signaturesStart);
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (b) => void judge(b)),
      { numRuns: 2000 },
    );
  });
});

describe("the witness's state file", () => {
  const dir = mkdtempSync(join(tmpdir(), 'witness-state-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('survives a restart; a conflict is kept; an unreadable file stops the start', () => {
    const file = join(dir, 'state.json');
    const state = WitnessState.open(file);
    expect(state.head(ORIGIN)).toBeUndefined();
    const root = treeOf(3).root(3);
    state.advance(ORIGIN, 3, root, 1_800_000_000);
    state.recordConflict({
      at: 1,
      origin: ORIGIN,
      size: 3,
      known_size: 3,
      known_root: toBase64(root),
      reason: 'x',
      note: 'n',
    });
    const again = WitnessState.open(file);
    expect(again.head(ORIGIN)?.size).toBe(3);
    expect(toBase64(again.head(ORIGIN)?.root as Uint8Array)).toBe(toBase64(root));
    expect(again.conflicts).toHaveLength(1);
    writeFileSync(file, '{"version": 1, "logs": {');
    expect(() => WitnessState.open(file)).toThrow(/refusing to start/);
  });
});
