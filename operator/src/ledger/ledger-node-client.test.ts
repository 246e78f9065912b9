import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LedgerNodeClient, LedgerNodeError, parseChainStatus } from './ledger-node-client.ts';

const key = (c: string) => c.repeat(64);
const good = {
  node_id: 'node-0',
  height: 12,
  latest_hash: 'ab'.repeat(32),
  validators: 2,
  quorum: 2,
  is_validator: true,
  validator_keys: [key('a'), key('b')],
};

describe('parseChainStatus', () => {
  it('maps the spec body to a ChainView', () => {
    expect(parseChainStatus(good)).toEqual({
      nodeId: 'node-0',
      height: 12,
      latestHash: 'ab'.repeat(32),
      validators: [key('a'), key('b')],
      quorum: 2,
      isValidator: true,
    });
  });

  it.each([
    ['not an object', 'hello'],
    ['null', null],
    ['negative height', { ...good, height: -1 }],
    ['fractional height', { ...good, height: 1.5 }],
    ['height as string', { ...good, height: '12' }],
    ['count and keys disagree', { ...good, validators: 3 }],
    ['duplicate key', { ...good, validator_keys: [key('a'), key('a')] }],
    ['malformed key', { ...good, validator_keys: [key('a'), 'B'.repeat(64)] }],
    ['missing field', { ...good, is_validator: undefined }],
  ])('%s is a bad-body error', (_name, body) => {
    try {
      parseChainStatus(body, 'http://n/chain');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(LedgerNodeError);
      expect((err as LedgerNodeError).kind).toBe('bad-body');
    }
  });

  it('fuzz: any JSON value either parses to a consistent view or is a bad-body error', () => {
    const mutated = fc.record({
      node_id: fc.oneof(fc.string(), fc.integer()),
      height: fc.oneof(fc.integer({ min: -5, max: 1e6 }), fc.double(), fc.string()),
      latest_hash: fc.string({ maxLength: 300 }),
      validators: fc.integer({ min: -1, max: 5 }),
      quorum: fc.integer({ min: -1, max: 5 }),
      is_validator: fc.oneof(fc.boolean(), fc.constant('true')),
      validator_keys: fc.array(fc.oneof(fc.constantFrom(key('a'), key('b'), key('c')), fc.string()), { maxLength: 5 }),
    });
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), mutated), (body) => {
        try {
          const view = parseChainStatus(body);
          expect(Number.isInteger(view.height)).toBe(true);
          expect(new Set(view.validators).size).toBe(view.validators.length);
        } catch (err) {
          expect(err).toBeInstanceOf(LedgerNodeError);
          expect((err as LedgerNodeError).kind).toBe('bad-body');
        }
      }),
      { numRuns: 500, seed: 42 },
    );
  });
});

describe('LedgerNodeClient options and requests refused before any I/O', () => {
  it('refuses bad options', () => {
    expect(() => new LedgerNodeClient({ timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => new LedgerNodeClient({ timeoutMs: 1.5 })).toThrow(/timeoutMs/);
    expect(() => new LedgerNodeClient({ token: 'a\nb' })).toThrow(/token/);
  });

  it('refuses bad base URLs and bad changes with invalid-request', async () => {
    const client = new LedgerNodeClient({ token: 'secret-token-123456' });
    try {
      for (const base of ['not a url', 'ftp://host', 'http://u:p@host', 'http://host/?q=1']) {
        await expect(client.chain(base)).rejects.toMatchObject({ kind: 'invalid-request' });
      }
      const bad = [
        { action: 'ADD', validator: 'xyz' },
        { action: 'DROP', validator: key('a') },
        { action: 'ADD', validator: key('a'), extra: 1 },
      ];
      for (const change of bad) {
        const err = await client.submitMembership('http://127.0.0.1:1', change as never).catch((e: unknown) => e);
        expect(err).toMatchObject({ kind: 'invalid-request' });
        expect(String((err as Error).message)).not.toContain('secret-token');
      }
    } finally {
      await client.close();
    }
  });
});
