// The wire types the app uses, derived from the service's own zod schemas (type-only imports: no zod in the bundle).
import type { z } from 'zod';
import type {
  PlaygroundRequest as PlaygroundRequestSchema,
  PlaygroundResponse as PlaygroundResponseSchema,
  TranslateBatch as TranslateBatchSchema,
  TranslateResult as TranslateResultSchema,
} from '../../../src/http/schemas.ts';

export type PlaygroundRequest = z.input<typeof PlaygroundRequestSchema>;
export type PlaygroundResponse = z.output<typeof PlaygroundResponseSchema>;
export type TranslateBatch = z.input<typeof TranslateBatchSchema>;
export type TranslateResult = z.output<typeof TranslateResultSchema>;
