import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DUPLICATE_IDS, hasUniqueIds, UNIQUE_IDS } from './unique-ids.ts';

describe('hasUniqueIds', () => {
  it('refuses a repeated id, ignores items without one', () => {
    expect(hasUniqueIds([{ id: 'a' }, { id: 'b' }, 'x', null, { other: 1 }])).toBe(true);
    expect(hasUniqueIds([{ id: 'a' }, { id: 'a' }])).toBe(false);
    const Batch = z.array(z.object({ id: z.string() })).refine(hasUniqueIds, { message: DUPLICATE_IDS });
    expect(Batch.safeParse([{ id: 'a' }, { id: 'a' }]).error?.issues[0]?.message).toBe(DUPLICATE_IDS);
    expect(z.toJSONSchema(Batch.meta({ description: UNIQUE_IDS })).description).toBe(UNIQUE_IDS);
  });
});
