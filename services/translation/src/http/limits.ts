// Limits of the HTTP API that the browser app shows too. No zod here: the browser bundle imports this file.

/** The playground's cap on the source, in characters. */
export const PLAYGROUND_MAX_CHARS = 500;

/** Length in characters (Unicode code points, as JSON Schema's maxLength counts). */
export const charLength = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};
