import { describe, expect, it } from 'vitest';
import { attribute, attributeValue } from './generate.ts';

describe('attribute', () => {
  // A benchmark tampers with `tampered-<value>`: on every attribute of either API the write must change what a
  // watcher reads, or the change it waits for never comes (an NGSI-LD Relationship ignored string values).
  it.each(['ngsi-v2', 'ngsi-ld'] as const)('%s: a tampered value changes every attribute', (api) => {
    for (let j = 0; j < 10; j++)
      for (const i of [0, 7, 4_242]) {
        const seeded = attribute(api, i, j);
        expect(attribute(api, i, j, `tampered-${String(attributeValue(i, j))}`), `attribute ${j} of ${i}`).not.toEqual(
          seeded,
        );
        expect(attribute(api, i, j, -100_000 - i)).not.toEqual(seeded);
        expect(attribute(api, i, j, attributeValue(i, j))).toEqual(seeded);
      }
  });

  it('an NGSI-LD Relationship points to a URN whatever the value', () => {
    const { object } = attribute('ngsi-ld', 3, 9, 'tampered-1,9,x') as { object: string };
    expect(object).toMatch(/^urn:ngsi-ld:Site:[A-Za-z0-9-]+$/);
  });
});
