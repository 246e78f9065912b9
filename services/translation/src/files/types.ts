// The locale-file vocabulary: what a format parser extracts (the strings to translate) and how it writes the file
// back. Every parser is pure: text in, strings and a writer out; no I/O.
import type { ValidationIssue } from '../language/index.ts';

/** The `format` values of `POST /api/v1/translate/file`. */
export const FILE_FORMATS = ['json', 'arb', 'xliff', 'po', 'android'] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];

/** One string of a file that goes to the provider. */
export interface FileString {
  /** Unique in the file: the JSON key path, the XLIFF unit (and segment) id, the PO context and msgid, the Android name. */
  key: string;
  /** A short id for the provider when the key is long (PO: the entry's number); else the key is the id. */
  id?: string;
  /** Source text as the provider sees it: escapes resolved, a plural group as one ICU plural message. */
  text: string;
  isIcu: boolean;
  /** What tells two equal source texts apart (PO msgctxt) or describes them (ARB description, XLIFF note). */
  context?: string;
  /** The string is a plural group of the format's own plural system, sent as `{count, plural, …}`. */
  plural?: boolean;
}

/** What the writer returns: the file and the issues the format itself found (plural forms, inline codes). */
export interface WrittenFile {
  content: string;
  issues: ValidationIssue[];
}

/** A parsed file: its strings, and a writer putting translations (by key) back into the same format. */
export interface ParsedFile {
  format: FileFormat;
  strings: FileString[];
  /**
   * The translated file for `targetLocale`. A key missing from `translations` keeps its source text (a string that
   * could not be translated is still a valid file).
   */
  write(translations: ReadonlyMap<string, string>, targetLocale: string): WrittenFile;
}

/** A file the service cannot parse: 400 with the line (1-based) and the reason. */
export class FileParseError extends Error {
  readonly line: number;
  readonly reason: string;
  constructor(line: number, reason: string) {
    super(`line ${line}: ${reason}`);
    this.name = 'FileParseError';
    this.line = line;
    this.reason = reason;
  }
}

/** The 1-based line of `offset` in `text`. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** A replacement of `text[start, end)`. */
export interface Splice {
  start: number;
  end: number;
  text: string;
}

/** `text` with `splices` applied (they must not overlap). */
export function applySplices(text: string, splices: Splice[]): string {
  const sorted = [...splices].sort((a, b) => a.start - b.start || a.end - b.end);
  let out = '';
  let pos = 0;
  for (const s of sorted) {
    out += text.slice(pos, s.start) + s.text;
    pos = s.end;
  }
  return out + text.slice(pos);
}
