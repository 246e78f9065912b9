import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { memoryKey } from './memory.ts';

/** The key as stored entries were keyed: SHA-256 (hex) of kind, normalized text and context, NUL-separated. */
const stored = (kind: 'icu' | 'text', text: string, context = '') =>
  createHash('sha256').update(`${kind}\u0000${text}\u0000${context}`).digest('hex');

describe('memoryKey', () => {
  it('keys stay those of the entries already stored', () => {
    expect(memoryKey({ text: 'Save your changes' })).toBe(stored('text', 'Save your changes'));
    expect(memoryKey({ text: 'Open', context: 'menu' })).toBe(stored('text', 'Open', 'menu'));
    expect(memoryKey({ text: '{n, plural, one {# file} other {# files}}', isIcu: true })).toBe(
      stored('icu', '{n,plural,one{# file} other{# files}}'),
    );
    expect(memoryKey({ text: 'Hello {name}, see <b>this</b>', isIcu: true })).toBe(
      stored('icu', "Hello {name}, see '<b>'this'</b>'"),
    );
  });

  it('one key for one meaning: NFC, one ICU spelling; kind and context tell texts apart', () => {
    expect(memoryKey({ text: 'Cafe\u0301' })).toBe(memoryKey({ text: 'Café' }));
    expect(memoryKey({ text: '{n,plural,one{# file}other{# files}}', isIcu: true })).toBe(
      memoryKey({ text: '{n, plural, one {# file} other {# files}}', isIcu: true }),
    );
    expect(memoryKey({ text: 'Open' })).not.toBe(memoryKey({ text: 'Open', isIcu: true }));
    expect(memoryKey({ text: 'Open', context: 'menu' })).not.toBe(memoryKey({ text: 'Open', context: 'door' }));
  });
});
