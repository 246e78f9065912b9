import type { z } from 'zod';
import { badRequest } from '../errors.ts';

/** Parses with zod; a failure becomes a 400 naming the first offending field. */
export function parseOr400<T extends z.ZodType>(schema: T, data: unknown): z.infer<T> {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  throw badRequest(`malformed payload: ${where}${issue?.message ?? 'invalid'}`);
}
