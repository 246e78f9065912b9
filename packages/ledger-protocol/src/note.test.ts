import { describe, expect, it } from 'vitest';
import { fromBase64, toBase64 } from './base64.ts';
import {
  formatCheckpoint,
  judgeLogSignatures,
  logSignedCheckpoint,
  logVerifierKey,
  ORIGIN_PATTERN,
  parseCheckpoint,
  parseCheckpointNote,
} from './checkpoint.ts';
import { verifySignature } from './crypto-node.ts';
import { toHex } from './hex.ts';
import { createSigner, keyPairFromSeed } from './keys.ts';
import { nobleVerify } from './noble.ts';
import {
  ALG_COSIGNATURE_V1,
  ALG_ED25519,
  formatNote,
  formatVerifierKey,
  MAX_NOTE_SIGNATURES,
  parseNote,
  parseVerifierKey,
  signatureLine,
  verifyNoteSignature,
} from './note.ts';
import { cosignatureLine } from './tlog-witness.ts';

// The signed-note example of Go's golang.org/x/mod/sumdb/note (example_test.go): an independent implementation's
// key and signature.
const GO_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const GO_NOTE =
  'If you think cryptography is the answer to your problem,\n' +
  "then you don't know what your problem is.\n" +
  '\n' +
  '— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';

const signer = (i: number) => createSigner(keyPairFromSeed(new Uint8Array(32).fill(i)).privateKey);

describe('base64', () => {
  it('round-trips and refuses every spelling but the canonical one', () => {
    for (const n of [0, 1, 2, 3, 32, 100]) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37) & 0xff);
      expect(fromBase64(toBase64(bytes))).toEqual(bytes);
    }
    expect(fromBase64('AAE=')).toEqual(Uint8Array.of(0, 1));
    for (const bad of ['AAE', 'AAF=', 'AA E=', 'AAE=\n', '====', 'A===', '-_8=']) expect(fromBase64(bad)).toBeNull();
  });
});

describe('C2SP signed notes', () => {
  it("reads Go's example key and verifies Go's signature (node:crypto and @noble)", () => {
    const key = parseVerifierKey(GO_VKEY);
    if (typeof key === 'string') throw new Error(key);
    expect(key).toMatchObject({ name: 'PeterNeumann', keyId: 0xc74f20a3, alg: ALG_ED25519 });
    expect(formatVerifierKey(key.name, ALG_ED25519, key.publicKey)).toBe(GO_VKEY);
    const note = parseNote(GO_NOTE);
    if (typeof note === 'string') throw new Error(note);
    const sig = note.signatures[0];
    if (!sig) throw new Error('no signature');
    expect(verifyNoteSignature(key, note.text, sig, verifySignature)).toBe(true);
    expect(verifyNoteSignature(key, note.text, sig, nobleVerify)).toBe(true);
    expect(verifyNoteSignature(key, note.text.replace('answer', 'Answer'), sig, verifySignature)).toBe(false);
  });

  it('refuses malformed verifier keys, with the reason', () => {
    expect(parseVerifierKey('PeterNeumann+c74f20a3')).toMatch(/<name>\+<key id>/);
    expect(parseVerifierKey('Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW')).toMatch(/space/);
    expect(parseVerifierKey('PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW')).toMatch(/key id/);
    expect(parseVerifierKey('PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW')).toMatch(/hex/);
    expect(parseVerifierKey(`x+00000000+${toBase64(Uint8Array.of(2, ...new Uint8Array(32)))}`)).toMatch(/type 0x02/);
    expect(parseVerifierKey(`x+00000000+${toBase64(Uint8Array.of(1, ...new Uint8Array(31)))}`)).toMatch(/32 bytes/);
  });

  it('refuses malformed notes: no blank line, control characters, bad lines, too many signatures', () => {
    const line = (GO_NOTE.split('\n\n')[1] as string).trimEnd();
    const text = 'hello\n';
    expect(parseNote(`${text}${line}\n`)).toMatch(/blank line/);
    expect(parseNote(`hel\tlo\n\n${line}\n`)).toMatch(/control character/);
    expect(parseNote(`hello\r\n\n${line}\n`)).toMatch(/control character/);
    expect(parseNote(`${text}\n${line}`)).toMatch(/newline/);
    expect(parseNote(`${text}\n- PeterNeumann AAAAAAAA\n`)).toMatch(/start with/);
    expect(parseNote(`${text}\n— Peter Neumann AAAAAAAA\n`)).toMatch(/malformed/);
    expect(parseNote(`${text}\n— PeterNeumann AAAA\n`)).toMatch(/malformed/);
    expect(parseNote(Uint8Array.of(0xff, 0x0a, 0x0a))).toMatch(/UTF-8/);
    const many = `${line}\n`.repeat(MAX_NOTE_SIGNATURES);
    expect(typeof parseNote(`${text}\n${many}`)).toBe('object');
    expect(parseNote(`${text}\n${many}${line}\n`)).toMatch(/more than 100/);
  });

  it('cosignatures (tlog-cosignature/v1): timestamped, bound to the text, the name and the key', () => {
    const w = signer(9);
    const key = parseVerifierKey(formatVerifierKey('witness.example/w1', ALG_COSIGNATURE_V1, w.publicKey));
    if (typeof key === 'string') throw new Error(key);
    const text = 'example.com/log\n7\nf+7CoKgXKE/tNys9TTXcr/ad6U/K3xvznmzew9y6SP0=\nextension 1\n';
    const line = cosignatureLine(key.name, w.publicKey, (m) => w.sign(m), text, 1_700_000_000);
    const note = parseNote(formatNote(text, [line]));
    if (typeof note === 'string') throw new Error(note);
    const sig = note.signatures[0] as (typeof note.signatures)[0];
    expect(sig.signature.length).toBe(72);
    expect(verifyNoteSignature(key, text, sig, verifySignature)).toBe(true);
    expect(verifyNoteSignature(key, text, sig, nobleVerify)).toBe(true);
    expect(verifyNoteSignature(key, text.replace('extension 1', 'extension X'), sig, verifySignature)).toBe(false);
    // The time is signed: another time in the line does not verify.
    const moved = Uint8Array.from(sig.signature);
    moved[7] = (moved[7] as number) ^ 1;
    expect(verifyNoteSignature(key, text, { ...sig, signature: moved }, verifySignature)).toBe(false);
    // The same key as a plain Ed25519 note key is another key id: the line is not its.
    const plain = parseVerifierKey(formatVerifierKey('witness.example/w1', ALG_ED25519, w.publicKey));
    if (typeof plain === 'string') throw new Error(plain);
    expect(verifyNoteSignature(plain, text, sig, verifySignature)).toBe(false);
  });
});

describe('checkpoints (c2sp.org/tlog-checkpoint)', () => {
  const root = Uint8Array.from({ length: 32 }, (_, i) => i);

  it('format and parse round-trip, extension lines kept', () => {
    for (const c of [
      { origin: 'scriptorium.dev/ledger/prod', size: 0, root, extension: '' },
      { origin: 'example.com/log', size: 9_007_199_254_740_991, root, extension: 'ext one\next two\n' },
    ]) {
      const parsed = parseCheckpoint(formatCheckpoint(c));
      if (typeof parsed === 'string') throw new Error(parsed);
      expect({ ...parsed, root: toHex(parsed.root) }).toEqual({ ...c, root: toHex(root) });
    }
  });

  it('refuses a size with leading zeroes or a sign, a root that is not 32 bytes, an empty extension line', () => {
    const r = toBase64(root);
    expect(parseCheckpoint(`o\n07\n${r}\n`)).toMatch(/size/);
    expect(parseCheckpoint(`o\n-7\n${r}\n`)).toMatch(/size/);
    expect(parseCheckpoint(`o\n7\n${toBase64(root.subarray(1))}\n`)).toMatch(/root/);
    expect(parseCheckpoint(`o\n7\n${r}\n\n`)).toMatch(/extension/);
    expect(parseCheckpoint(`o\n7\n${r}`)).toMatch(/newline/);
    expect(parseCheckpoint(`o\n7\n`)).toMatch(/origin, a size and a root/);
  });

  it('an origin never begins with { (no checkpoint text is a consensus message) and has no space or +', () => {
    for (const ok of ['scriptorium.dev/ledger/prod', 'a', 'example.com/x_y-z.1'])
      expect(ORIGIN_PATTERN.test(ok)).toBe(true);
    for (const bad of ['{"domain":1}', 'a b', 'a+b', '', 'é']) expect(ORIGIN_PATTERN.test(bad)).toBe(false);
  });

  it('log signatures: a quorum of the active set, each its own key id; others are not counted', () => {
    const set = [1, 2, 3, 4].map(signer);
    const outsider = signer(5);
    const origin = 'scriptorium.dev/ledger/t';
    const active = set.map((s) => s.publicKey);
    const sign = (by: typeof set) =>
      logSignedCheckpoint(
        origin,
        3,
        root,
        by.map((s) => [s.publicKey, (m) => s.sign(m)] as const),
      );
    const judge = (note: string) => {
      const parsed = parseCheckpointNote(note);
      if (typeof parsed === 'string') throw new Error(parsed);
      return judgeLogSignatures(parsed.note, origin, active, verifySignature);
    };
    expect(judge(sign(set.slice(0, 3)))).toMatchObject({ ok: true, quorum: 3, validators: 4 });
    expect(judge(sign(set.slice(0, 2)))).toMatchObject({
      ok: false,
      reason: '2 valid signatures of validators active there, quorum is 3',
    });
    expect(judge(sign([...set.slice(0, 2), outsider])).ok).toBe(false);
    // A validator's signature line with another validator's signature bytes: malformed, refused.
    const note = sign(set.slice(0, 3));
    const lines = note.split('\n\n')[1] as string;
    const first = lines.split('\n')[0] as string;
    const second = lines.split('\n')[1] as string;
    const swapped = `${first.split(' ').slice(0, 2).join(' ')} ${toBase64(Uint8Array.of(...(fromBase64(first.split(' ')[2] as string) as Uint8Array).subarray(0, 4), ...(fromBase64(second.split(' ')[2] as string) as Uint8Array).subarray(4)))}`;
    expect(judge(note.replace(first, swapped)).reason).toMatch(/does not verify/);
    // The key a standard witness is given for a validator: name = origin, type 0x01, the validator's key.
    const vkey = parseVerifierKey(logVerifierKey(origin, active[0] as string).text);
    expect(vkey).toMatchObject({ name: origin, alg: ALG_ED25519, publicKey: active[0] });
    expect(signatureLine(origin, 1, new Uint8Array(64)).startsWith(`— ${origin} `)).toBe(true);
  });
});
