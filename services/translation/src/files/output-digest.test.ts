// The parsers and writers answer byte for byte what they answered before they were made faster: every format's
// fixtures, the benchmark's shapes and a seeded corpus of random and mutated files are parsed and written back with
// four sets of translations, and the digest of all the answers (strings, written files, issues, refusals with their
// line and reason) must be the one the earlier code gave. Change a digest only with a change of output made on
// purpose (and say so in the commit).
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FILE_FORMATS, type FileFormat, parseLocaleFile, parseTmx } from './index.ts';
import { fixture, mutation } from './testing.ts';
import { FileParseError } from './types.ts';

const FIXTURES: Record<FileFormat, string[]> = {
  json: ['nested.json'],
  arb: ['app_en.arb'],
  xliff: ['app.xlf', 'app.xliff2.xlf'],
  po: ['messages.pot'],
  android: ['strings.xml', 'ru.strings.xml'],
};

/** Files shaped like the benchmark's: many units, inline codes, ICU plurals, a note, an entity, an existing target. */
const SHAPES: Partial<Record<FileFormat, string>> = {
  json: JSON.stringify(
    Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [
        `section${i % 4}.k${i}`,
        i % 10 === 0
          ? `{count, plural, one {# message in folder ${i}} other {# messages in folder ${i}}}`
          : i % 3 === 0
            ? `Hello {name}, you have new items in <b>project ${i}</b>`
            : `Save the "changes" to document\\number ${i} before closing`,
      ]),
    ),
    null,
    2,
  ),
  xliff: `<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en">
  <file id="app">
${Array.from(
  { length: 60 },
  (
    _,
    i,
  ) => `    <unit id="u${i}"${i === 7 ? ' translate="no"' : ''}>${i % 5 === 0 ? `<notes><note>note &amp; ${i}</note></notes>` : ''}
      <segment${i % 4 === 0 ? " state='initial'" : ''}>
        <source>${i % 3 === 0 ? `Press <pc id="1">Enter</pc> to open item ${i} <ph id="2"/>.` : `The file &lt;${i}&gt; was saved.`}</source>${i % 6 === 0 ? '\n        <target>old</target>' : ''}${i % 9 === 0 ? '\n        <target/>' : ''}
      </segment>
    </unit>`,
).join('\n')}
  </file>
</xliff>
`,
};

/** The corpus of one format: fixtures, the benchmark's shape, random text and mutations of every fixture. */
function corpus(format: FileFormat): string[] {
  const files = FIXTURES[format].map(fixture);
  const shape = SHAPES[format];
  return [
    ...files,
    ...(shape ? [shape] : []),
    ...fc.sample(fc.string({ unit: 'binary', maxLength: 300 }), { numRuns: 100, seed: 25 }),
    ...files.flatMap((f) => fc.sample(mutation(f), { numRuns: 600, seed: 2025 })),
  ];
}

/** Translations that exercise the writers: the source itself, changed text, broken markup, none. */
const TRANSLATIONS: [string, (text: string) => string | undefined][] = [
  ['pl', (t) => t],
  ['ar', (t) => t.replace(/(^|>)([^<]*)/g, (_, a: string, b: string) => a + b.toUpperCase())],
  ['ja', (t) => `x < y & "z" ${t.replace(/<[^>]*>/, '')} {`],
  ['en', () => undefined],
];

/** Everything the parser and the writers answer for `text`, as one string. */
function answers(format: FileFormat, text: string): string {
  try {
    const file = parseLocaleFile(format, text);
    const out: unknown[] = [file.format, file.strings];
    for (const [locale, translate] of TRANSLATIONS) {
      const map = new Map<string, string>();
      for (const s of file.strings) {
        const t = translate(s.text);
        if (t !== undefined) map.set(s.key, t);
      }
      try {
        out.push(file.write(map, locale));
      } catch (e) {
        out.push(['write refused', e instanceof Error ? e.message : String(e)]);
      }
    }
    return JSON.stringify(out);
  } catch (e) {
    if (e instanceof FileParseError) return JSON.stringify(['refused', e.line, e.reason]);
    throw e;
  }
}

const digest = (parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 16);

/** The earlier code's digests. */
const EXPECTED: Record<FileFormat | 'tmx', string> = {
  json: '2fadd26613a8c33e',
  arb: 'c2a562d6163db86f',
  xliff: '012d2c627811f49a',
  po: 'a6f39e3511e745c8',
  android: '57dbedadff646e08',
  tmx: '0e4d423dcd82fab7',
};

describe('locale files: the same answers as before', () => {
  it.each(FILE_FORMATS)('%s: fixtures, the benchmark shape and a seeded corpus', (format) => {
    const all = corpus(format).map((text) => answers(format, text));
    // Enough of the corpus parses to exercise the writers (most mutations are refused).
    expect(all.filter((a) => !a.startsWith('["refused"')).length).toBeGreaterThan(100);
    expect(digest(all)).toBe(EXPECTED[format]);
  });

  it('tmx: a document and its mutations', () => {
    const tmx =
      '<?xml version="1.0"?><tmx version="1.4"><header srclang="en"/><body><tu><prop type="x-context">c &amp; d</prop><tuv xml:lang="en"><seg>a <b>x</b></seg></tuv><tuv xml:lang="de"><seg>b</seg></tuv></tu></body></tmx>';
    const read = (text: string) => {
      try {
        return JSON.stringify(parseTmx(text));
      } catch (e) {
        if (e instanceof FileParseError) return JSON.stringify(['refused', e.line, e.reason]);
        throw e;
      }
    };
    expect(digest([tmx, ...fc.sample(mutation(tmx), { numRuns: 300, seed: 7 })].map(read))).toBe(EXPECTED.tmx);
  });
});
