// Fuzzing the parsers (fast-check, seeded): random text and mutated real files either parse or are refused with a
// FileParseError (never another exception, never a hang), and whatever parses writes back a file that parses again
// with the same keys. Hostile shapes (deep nesting, entity expansion, huge inputs) are refused or handled in time.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FILE_FORMATS, type FileFormat, parseLocaleFile, parseTmx } from './index.ts';
import { fixture, mutation, pseudoTranslations } from './testing.ts';
import { FileParseError } from './types.ts';

const FIXTURES: Record<FileFormat, string[]> = {
  json: ['nested.json'],
  arb: ['app_en.arb'],
  xliff: ['app.xlf', 'app.xliff2.xlf'],
  po: ['messages.pot'],
  android: ['strings.xml', 'ru.strings.xml'],
};

/** Parses; true when it parsed, false when refused with FileParseError; any other exception fails the test. */
function tryParse(format: FileFormat, text: string): boolean {
  try {
    const file = parseLocaleFile(format, text);
    const { content } = file.write(pseudoTranslations(file, 'pl'), 'pl');
    expect(parseLocaleFile(format, content).strings.map((s) => s.key)).toEqual(file.strings.map((s) => s.key));
    return true;
  } catch (e) {
    if (e instanceof FileParseError) return false;
    throw e;
  }
}

describe('parser fuzzing', () => {
  it.each(FILE_FORMATS)('%s: every fixture parses (positive control)', (format) => {
    for (const name of FIXTURES[format]) expect(tryParse(format, fixture(name)), name).toBe(true);
  });

  it.each(FILE_FORMATS)('%s: random text is parsed or refused with FileParseError', (format) => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        tryParse(format, text);
      }),
      { numRuns: 300, seed: 25 },
    );
  });

  it.each(FILE_FORMATS)('%s: mutated real files are parsed and written back, or refused', (format) => {
    for (const name of FIXTURES[format]) {
      const source = fixture(name);
      let refused = 0;
      fc.assert(
        fc.property(mutation(source), (text) => {
          if (!tryParse(format, text)) refused++;
        }),
        { numRuns: 250, seed: 2025 },
      );
      expect(refused, `${name}: some mutations must be refused`).toBeGreaterThan(0);
    }
  });

  it('TMX: mutated documents are read or refused', () => {
    const tmx =
      '<?xml version="1.0"?><tmx version="1.4"><header srclang="en"/><body><tu><tuv xml:lang="en"><seg>a</seg></tuv><tuv xml:lang="de"><seg>b</seg></tuv></tu></body></tmx>';
    expect(parseTmx(tmx)).toHaveLength(1);
    fc.assert(
      fc.property(mutation(tmx), (text) => {
        try {
          parseTmx(text);
        } catch (e) {
          if (!(e instanceof FileParseError)) throw e;
        }
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('hostile input: deep nesting, entity expansion and large files are refused or handled quickly', () => {
    const started = Date.now();
    const hostile: [FileFormat, string][] = [
      ['json', '['.repeat(100_000)],
      ['json', `{"a": ${'{"a": '.repeat(50_000)}"x"${'}'.repeat(50_001)}`],
      ['arb', `{"a": ${'['.repeat(10_000)}`],
      ['xliff', `<xliff version="2.0">${'<g>'.repeat(50_000)}`],
      ['android', `<resources>${'<b>'.repeat(50_000)}${'</b>'.repeat(50_000)}</resources>`],
      [
        'android',
        '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><resources><string name="x">&b;</string></resources>',
      ],
      ['xliff', '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><xliff version="1.2">&e;</xliff>'],
      ['po', `msgid "${'\\"'.repeat(100_000)}"\nmsgstr ""\n`],
      ['po', `${'#'.repeat(200_000)}\nmsgid "a"\nmsgstr ""\n`],
      ['po', `msgid ""\nmsgstr "Plural-Forms: nplurals=2; plural=${'('.repeat(5000)}n${')'.repeat(5000)};\\n"\n`],
    ];
    for (const [format, text] of hostile) {
      const ok = tryParse(format, text);
      if (format === 'po' && text.startsWith('#')) expect(ok).toBe(true);
    }
    // A large valid file parses in well under a second.
    const big = JSON.stringify(
      Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, `Value {n} number ${i}`])),
    );
    expect(parseLocaleFile('json', big).strings).toHaveLength(5000);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
