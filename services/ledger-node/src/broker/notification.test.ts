// What a notification body tells the watcher, for bodies a broker sends and for anything else the network brings:
// the entities' ids and types, or an error — never another exception, never more than the bound.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_NOTIFIED_ENTITIES, parseNotification } from './notification.ts';

describe('parseNotification', () => {
  it('reads Orion’s and Scorpio’s notifications (as they send them) to entity ids and types', () => {
    expect(
      parseNotification('ngsi-v2', {
        subscriptionId: '5f1e',
        data: [{ id: 'Room1', type: 'Room', temperature: { type: 'Number', value: 23, metadata: {} } }],
      }),
    ).toEqual({ refs: [{ id: 'Room1', type: 'Room' }] });
    expect(
      parseNotification('ngsi-ld', {
        id: 'notification:-7198938736822685159',
        type: 'Notification',
        subscriptionId: 'urn:9a45153c-bbe3-46bf-8b04-7d9ecf766035',
        notifiedAt: '2026-11-27T06:30:30.376000Z',
        data: [
          { id: 'urn:ngsi-ld:Sensor:1', type: 'Sensor', temperature: { type: 'Property', value: 30 } },
          { id: 'urn:ngsi-ld:Sensor:2', type: ['Sensor', 'Device'], deletedAt: '2026-11-27T06:30:50.535000Z' },
        ],
      }),
    ).toEqual({
      refs: [
        { id: 'urn:ngsi-ld:Sensor:1', type: 'Sensor' },
        { id: 'urn:ngsi-ld:Sensor:2', type: 'Device,Sensor' },
      ],
    });
  });

  it('refuses what is not a notification of that API', () => {
    const refused = [
      ['ngsi-v2', null],
      ['ngsi-v2', []],
      ['ngsi-v2', { data: [] }],
      ['ngsi-v2', { subscriptionId: 's', data: {} }],
      ['ngsi-v2', { subscriptionId: 's', data: [{ type: 'T' }] }],
      ['ngsi-v2', { subscriptionId: 's', data: [{ id: 'a', type: ['T'] }] }],
      ['ngsi-ld', { subscriptionId: 's', data: [] }],
      ['ngsi-ld', { type: 'Notification', subscriptionId: 's', data: [{ id: 'a', type: 'A,B' }] }],
      ['ngsi-ld', { type: 'Notification', subscriptionId: 's', data: [{ id: 'x'.repeat(2049), type: 'T' }] }],
      [
        'ngsi-v2',
        {
          subscriptionId: 's',
          data: Array.from({ length: MAX_NOTIFIED_ENTITIES + 1 }, (_, i) => ({ id: `e${i}`, type: 'T' })),
        },
      ],
    ] as const;
    for (const [api, body] of refused)
      expect(parseNotification(api, body), JSON.stringify(body).slice(0, 80)).toHaveProperty('error');
  });

  it('fuzz: any JSON is refs or an error, never an exception, and refs only of string ids', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('ngsi-v2' as const, 'ngsi-ld' as const),
        fc.oneof(
          fc.jsonValue(),
          fc.record({
            subscriptionId: fc.oneof(fc.string(), fc.jsonValue()),
            type: fc.constantFrom('Notification', 'x', undefined),
            data: fc.oneof(
              fc.jsonValue(),
              fc.array(fc.record({ id: fc.oneof(fc.string(), fc.jsonValue()), type: fc.jsonValue() }), {
                maxLength: 5,
              }),
            ),
          }),
        ),
        (api, body) => {
          const r = parseNotification(api, body);
          if ('refs' in r)
            for (const ref of r.refs) {
              expect(typeof ref.id).toBe('string');
              expect(typeof ref.type).toBe('string');
            }
          else expect(typeof r.error).toBe('string');
        },
      ),
      { numRuns: 3000, seed: 5 },
    );
  });
});
