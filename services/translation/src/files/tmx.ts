// TMX 1.4b, the exchange format of translation memories: export builds one <tu> per entry (source and target <tuv>,
// the context as a <prop>); import reads every <tu>, pairing the source <tuv> with each other language. Inline
// elements (<bpt>, <ept>, <ph>, <it>, <ut>, <hi>) contribute their text: the native codes they hold are text here.

import { FileParseError } from './types.ts';
import { checkWellFormed, childElements, escapeXmlAttr, escapeXmlText, parseXmlTree, type XmlElement } from './xml.ts';

export interface TmxEntry {
  sourceLocale: string;
  targetLocale: string;
  source: string;
  target: string;
  context?: string | null;
  isIcu?: boolean;
  /** ISO time, written as TMX's creationdate. */
  createdAt?: string;
}

const tmxDate = (iso: string) => iso.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');

/**
 * A TMX 1.4b document of `entries`.
 * @example buildTmx([{ sourceLocale: 'en', targetLocale: 'de', source: 'Save', target: 'Speichern' }], '0.1.0')
 */
export function buildTmx(entries: TmxEntry[], toolVersion: string): string {
  const srclang = new Set(entries.map((e) => e.sourceLocale));
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<tmx version="1.4">',
    `  <header creationtool="Scriptorium" creationtoolversion="${escapeXmlAttr(toolVersion)}" segtype="sentence" o-tmf="scriptorium" adminlang="en" srclang="${escapeXmlAttr(srclang.size === 1 ? [...srclang][0]! : '*all*')}" datatype="plaintext"/>`,
    '  <body>',
  ];
  for (const e of entries) {
    const date = e.createdAt ? ` creationdate="${tmxDate(e.createdAt)}"` : '';
    lines.push(`    <tu srclang="${escapeXmlAttr(e.sourceLocale)}"${date}>`);
    if (e.context) lines.push(`      <prop type="x-context">${escapeXmlText(e.context)}</prop>`);
    if (e.isIcu) lines.push('      <prop type="x-icu">true</prop>');
    lines.push(`      <tuv xml:lang="${escapeXmlAttr(e.sourceLocale)}"><seg>${escapeXmlText(e.source)}</seg></tuv>`);
    lines.push(`      <tuv xml:lang="${escapeXmlAttr(e.targetLocale)}"><seg>${escapeXmlText(e.target)}</seg></tuv>`);
    lines.push('    </tu>');
  }
  lines.push('  </body>', '</tmx>', '');
  return lines.join('\n');
}

/** All text under `el`, inline elements included. */
function textOf(el: XmlElement): string {
  let out = '';
  for (const c of el.children) out += c.kind === 'element' ? textOf(c.element) : c.text;
  return out;
}

/** Reads a TMX document (1.1–1.4b); throws FileParseError (line, reason) when it is not one. */
export function parseTmx(content: string): TmxEntry[] {
  const text = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content;
  checkWellFormed(text);
  const root = parseXmlTree(text);
  if (root.name !== 'tmx') throw new FileParseError(1, 'the root element is not <tmx>');
  const header = childElements(root, 'header')[0];
  const body = childElements(root, 'body')[0];
  if (!header || !body) throw new FileParseError(1, 'a TMX document needs <header> and <body>');
  const headerLang = header.attrs.get('srclang');
  const entries: TmxEntry[] = [];
  for (const tu of childElements(body, 'tu')) {
    const tuvs = childElements(tu, 'tuv').map((tuv) => ({
      lang: tuv.attrs.get('xml:lang') ?? tuv.attrs.get('lang') ?? '',
      seg: childElements(tuv, 'seg')[0],
    }));
    const srclang = tu.attrs.get('srclang') ?? headerLang;
    const source =
      srclang && srclang !== '*all*' ? tuvs.find((t) => t.lang.toLowerCase() === srclang.toLowerCase()) : tuvs[0];
    if (!source?.seg) continue;
    const props = new Map(childElements(tu, 'prop').map((p) => [p.attrs.get('type') ?? '', textOf(p)]));
    for (const t of tuvs) {
      if (t === source || !t.seg || !t.lang) continue;
      entries.push({
        sourceLocale: source.lang,
        targetLocale: t.lang,
        source: textOf(source.seg),
        target: textOf(t.seg),
        context: props.get('x-context') ?? null,
        isIcu: props.get('x-icu') === 'true',
      });
    }
  }
  return entries;
}
