// fastify validates requests with the routes' zod schemas and serializes replies with JSON.stringify.
import type { FastifySchemaCompiler } from 'fastify';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import type { z } from 'zod';

/** Turns the first zod issue into a short message naming the field (never echoing the value). */
export function describeIssue(error: z.ZodError, context: string): string {
  const issue = error.issues[0];
  if (!issue) return `invalid ${context}`;
  const path = issue.path.length ? `${context}.${issue.path.map(String).join('.')}` : context;
  return `${path}: ${issue.message}`;
}

export const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    const result = schema.safeParse(data);
    if (result.success) return { value: result.data };
    const error = new Error(describeIssue(result.error, httpPart ?? 'body')) as Error & { statusCode: number };
    error.statusCode = 400;
    return { error };
  };

export const serializerCompiler: FastifySerializerCompiler<z.ZodType> = () => (data) => JSON.stringify(data);
