// One rule of both APIs' batches: the items' ids are unique within a request (results and records are keyed by them).
// A zod refinement for the validator (400 with the message) and a description for the document.

/** The message of a batch whose ids repeat (a 400 `{error}`, after the field's path). */
export const DUPLICATE_IDS = 'item ids must be unique';

/** What the document says on such a batch field. */
export const UNIQUE_IDS = 'the items’ ids are unique within the request (400 otherwise)';

/**
 * True when no two items (objects with an `id`) share an id; items without one are left to the item schema.
 * @example z.array(Item).refine(hasUniqueIds, { message: DUPLICATE_IDS }).meta({ description: UNIQUE_IDS })
 */
export function hasUniqueIds(items: readonly unknown[]): boolean {
  const seen = new Set<unknown>();
  for (const item of items) {
    if (typeof item !== 'object' || item === null || !('id' in item)) continue;
    const id = (item as { id: unknown }).id;
    if (seen.has(id)) return false;
    seen.add(id);
  }
  return true;
}
