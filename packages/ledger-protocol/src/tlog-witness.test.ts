import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toBase64 } from './base64.ts';
import { toHex } from './hex.ts';
import {
  formatAddCheckpoint,
  formatSizeResponse,
  MAX_ADD_CHECKPOINT_BYTES,
  parseAddCheckpoint,
  parseCosignatureLines,
  parseSizeResponse,
} from './tlog-witness.ts';

const hash = (i: number) => Uint8Array.from({ length: 32 }, (_, j) => (i * 31 + j) & 0xff);
const CHECKPOINT =
  'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n';

describe('tlog-witness add-checkpoint requests', () => {
  it("reads the spec's example request", () => {
    const body = `old 20852014\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\njrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n\n${CHECKPOINT}`;
    const req = parseAddCheckpoint(body);
    if (typeof req === 'string') throw new Error(req);
    expect(req.oldSize).toBe(20852014);
    expect(req.proof.map(toBase64)).toEqual([
      'PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=',
      'jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=',
    ]);
    expect(req.checkpoint).toBe(CHECKPOINT);
    expect(formatAddCheckpoint(req)).toBe(body);
  });

  it('refuses every malformed head with a reason', () => {
    const p = toBase64(hash(1));
    for (const [body, reason] of [
      [`old 5\n${p}\n${CHECKPOINT}`, /proof line/],
      ['old 5\nno blank line at all\n', /blank line/],
      [`old 05\n\n${CHECKPOINT}`, /old <size>/],
      [`old -5\n\n${CHECKPOINT}`, /old <size>/],
      [`old  5\n\n${CHECKPOINT}`, /old <size>/],
      [`Old 5\n\n${CHECKPOINT}`, /old <size>/],
      [`old 99999999999999999\n\n${CHECKPOINT}`, /old <size>|too large/],
      [`old 5\n${toBase64(hash(1).subarray(1))}\n\n${CHECKPOINT}`, /proof line/],
      [`old 5\n${p.slice(0, -1)}\n\n${CHECKPOINT}`, /proof line/],
      [`old 5\n${`${p}\n`.repeat(64)}\n${CHECKPOINT}`, /more than 63/],
      ['old 5\n\n', /no checkpoint/],
    ] as const)
      expect(parseAddCheckpoint(body)).toMatch(reason);
    expect(parseAddCheckpoint(Uint8Array.of(0x6f, 0x6c, 0x64, 0x20, 0x30, 0x0a, 0x0a, 0xc3))).toMatch(/UTF-8/);
    expect(parseAddCheckpoint(new Uint8Array(MAX_ADD_CHECKPOINT_BYTES + 1))).toMatch(/over/);
  });

  it('fuzz: random bytes, random text and mutations of a valid request never throw; what parses re-formats to itself', () => {
    const valid = formatAddCheckpoint({ oldSize: 12, proof: [hash(1), hash(2), hash(3)], checkpoint: CHECKPOINT });
    const bytes = new TextEncoder().encode(valid);
    const check = (input: Uint8Array | string) => {
      const got = parseAddCheckpoint(input);
      if (typeof got !== 'string') {
        const text = typeof input === 'string' ? input : new TextDecoder().decode(input);
        expect(formatAddCheckpoint(got)).toBe(text);
      }
    };
    fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), check), { numRuns: 2000 });
    fc.assert(
      fc.property(
        fc.string({
          maxLength: 300,
          unit: fc.constantFrom('o', 'l', 'd', ' ', '\n', '0', '1', '9', 'A', '=', '/', '+', '—'),
        }),
        check,
      ),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.nat(bytes.length - 1), fc.integer({ min: 0, max: 255 }), fc.nat(8), (at, value, cut) => {
        const mutated = Uint8Array.from(bytes);
        mutated[at] = value;
        check(mutated);
        check(mutated.subarray(0, Math.max(0, at - cut)));
        check(new Uint8Array([...bytes.subarray(0, at), value, ...bytes.subarray(at)]));
      }),
      { numRuns: 3000 },
    );
  });

  it('answers: a 409 size, and cosignature lines', () => {
    expect(parseSizeResponse(formatSizeResponse(42))).toBe(42);
    for (const bad of ['42', '042\n', '4 2\n', '\n', '-1\n']) expect(parseSizeResponse(bad)).toBeNull();
    expect(parseCosignatureLines('— w AAAA\n— v BBBB\n')).toEqual(['— w AAAA\n', '— v BBBB\n']);
    expect(parseCosignatureLines('— w AAAA')).toMatch(/not signature lines/);
    expect(parseCosignatureLines('ok\n')).toMatch(/not a signature/);
    expect(toHex(hash(0)).length).toBe(64);
  });
});
