// Locale files: parse a file of one of the five formats into the strings to translate, and write the translations
// back in the same format. Pure (no I/O); the service (src/domain/translate-file.ts) sends the strings through the
// metered translate path.
import { parseAndroid } from './android.ts';
import { parseArb, parseMessageJson } from './json.ts';
import { parsePo } from './po.ts';
import type { FileFormat, ParsedFile } from './types.ts';
import { parseXliff } from './xliff.ts';

export { gettextPlurals, parsePluralForms, pluralFormsHeader } from './gettext-plural.ts';
export { buildPluralIcu, normalizeIcu, splitPluralIcu } from './icu-plural.ts';
export { buildTmx, parseTmx, type TmxEntry } from './tmx.ts';
export {
  FILE_FORMATS,
  type FileFormat,
  FileParseError,
  type FileString,
  type ParsedFile,
  type WrittenFile,
} from './types.ts';

const PARSERS: Record<FileFormat, (content: string) => ParsedFile> = {
  json: parseMessageJson,
  arb: parseArb,
  xliff: parseXliff,
  po: parsePo,
  android: parseAndroid,
};

/**
 * Parses `content` as `format`; throws FileParseError (line and reason) when it is not a valid file of that format.
 * @example parseLocaleFile('json', '{"hello": "Hello {name}"}').strings // [{ key: 'hello', text: 'Hello {name}', isIcu: true }]
 */
export function parseLocaleFile(format: FileFormat, content: string): ParsedFile {
  // A byte-order mark is not part of the document (the JSON and XML parsers would refuse it).
  const text = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content;
  return PARSERS[format](text);
}
