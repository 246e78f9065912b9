import { DOMParser } from '@xmldom/xmldom';
import { describe, expect, it } from 'vitest';
import { buildTmx, parseTmx, type TmxEntry } from './tmx.ts';
import { FileParseError } from './types.ts';

const entries: TmxEntry[] = [
  {
    sourceLocale: 'en',
    targetLocale: 'de',
    source: 'Save <b>{name}</b> & close',
    target: 'Speichern <b>{name}</b> & schließen',
    context: 'button',
  },
  {
    sourceLocale: 'en',
    targetLocale: 'pl',
    source: '{n, plural, one {# file} other {# files}}',
    target: '{n, plural, one {# plik} few {# pliki} many {# plików} other {# pliku}}',
    isIcu: true,
    createdAt: '2026-11-20T10:00:00Z',
  },
];

describe('TMX 1.4b', () => {
  it('export parses with an independent XML parser as TMX 1.4b, and import reads it back', () => {
    const tmx = buildTmx(entries, '1.0.0');
    const doc = new DOMParser({
      onError: (l, m) => {
        if (l !== 'warning') throw new Error(m);
      },
    }).parseFromString(tmx, 'text/xml');
    expect(doc.documentElement!.getAttribute('version')).toBe('1.4');
    const header = doc.getElementsByTagName('header')[0]!;
    for (const a of ['creationtool', 'creationtoolversion', 'segtype', 'o-tmf', 'adminlang', 'srclang', 'datatype']) {
      expect(header.getAttribute(a), a).toBeTruthy();
    }
    const tus = Array.from(doc.getElementsByTagName('tu'));
    expect(tus).toHaveLength(2);
    expect(tus[0]!.getElementsByTagName('seg')[0]!.textContent).toBe(entries[0]!.source);
    expect(tus[1]!.getAttribute('creationdate')).toBe('20261120T100000Z');
    expect(parseTmx(tmx)).toEqual(entries.map(({ createdAt: _, ...e }) => ({ context: null, isIcu: false, ...e })));
  });

  it('reads other tools’ TMX: inline elements as text, srclang from the header, several target languages', () => {
    const tmx = `<?xml version="1.0"?>
<tmx version="1.4"><header srclang="en-US" creationtool="x" creationtoolversion="1" segtype="sentence" o-tmf="x" adminlang="en" datatype="html"/>
<body>
  <tu><tuv xml:lang="en-US"><seg>Click <bpt i="1">&lt;b&gt;</bpt>here<ept i="1">&lt;/b&gt;</ept></seg></tuv>
      <tuv xml:lang="fr-FR"><seg>Cliquez <bpt i="1">&lt;b&gt;</bpt>ici<ept i="1">&lt;/b&gt;</ept></seg></tuv>
      <tuv xml:lang="de-DE"><seg>Klicken Sie <bpt i="1">&lt;b&gt;</bpt>hier<ept i="1">&lt;/b&gt;</ept></seg></tuv></tu>
</body></tmx>`;
    expect(parseTmx(tmx).map((e) => [e.targetLocale, e.source, e.target])).toEqual([
      ['fr-FR', 'Click <b>here</b>', 'Cliquez <b>ici</b>'],
      ['de-DE', 'Click <b>here</b>', 'Klicken Sie <b>hier</b>'],
    ]);
  });

  it('refuses what is not TMX with the line', () => {
    for (const bad of ['<tmx version="1.4"><header/>', '<xliff/>', '<tmx><body/></tmx>', 'not xml']) {
      expect(() => parseTmx(bad), bad).toThrow(FileParseError);
    }
    expect(parseTmx('<tmx version="1.4"><header srclang="en"/><body/></tmx>')).toEqual([]); // positive control
  });
});
