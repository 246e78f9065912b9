// Types of the test-only parsers that ship none (the tests read only these fields).
declare module 'gettext-parser' {
  interface PoEntry {
    msgid: string;
    msgctxt?: string;
    msgid_plural?: string;
    msgstr: string[];
    comments?: { translator?: string; extracted?: string; reference?: string; flag?: string; previous?: string };
  }
  export const po: {
    parse(
      input: string | Buffer,
      options?: { defaultCharset?: string; validation?: boolean },
    ): {
      charset: string;
      headers: Record<string, string>;
      translations: Record<string, Record<string, PoEntry>>;
    };
  };
}

declare module 'xliff' {
  type Content = string | Record<string, unknown> | (string | Record<string, unknown>)[];
  interface XliffJs {
    sourceLanguage: string;
    targetLanguage?: string;
    resources: Record<string, Record<string, { source: Content; target?: Content; note?: string }>>;
  }
  const xliff: { xliff12ToJs(xml: string): Promise<XliffJs>; xliff2js(xml: string): Promise<XliffJs> };
  export default xliff;
}
