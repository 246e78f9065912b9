import { describe, expect, it } from 'vitest';
import { EventBatch, type EventInput, type EventRecorder } from './events.ts';
import type { KubeObject } from './types.ts';

describe('EventBatch', () => {
  it('writes one Event per reason, listing every object', async () => {
    const batch = new EventBatch();
    batch.add({ type: 'Normal', reason: 'Created', action: 'Create', note: 'Created Service web' });
    batch.add({ type: 'Normal', reason: 'Created', action: 'Create', note: 'Created Job web-migrate-1' });
    batch.add({ type: 'Normal', reason: 'Deleted', action: 'Delete', note: 'Deleted Ingress web' });
    expect(batch.size).toBe(2);
    const written: EventInput[] = [];
    const recorder = { record: async (_obj: KubeObject, event: EventInput) => void written.push(event) };
    const owner: KubeObject = { apiVersion: 'v', kind: 'K', metadata: { name: 'web' } };
    await batch.flush(recorder as unknown as EventRecorder, owner);
    expect(written).toEqual([
      { type: 'Normal', reason: 'Created', action: 'Create', note: 'Created Service web; Created Job web-migrate-1' },
      { type: 'Normal', reason: 'Deleted', action: 'Delete', note: 'Deleted Ingress web' },
    ]);
    expect(batch.size).toBe(0);
  });
});
