// What a broker's notification tells the watcher, read from a body that faces the network: which entities
// changed. NGSI-v2 (Orion): `{subscriptionId, data: [entity…]}`; NGSI-LD: `{id, type: "Notification",
// subscriptionId, notifiedAt, data: [entity…]}`. Only each entity's id and type are taken: the watcher treats a
// notification as news that an entity changed and reads its current value from both sides before judging it, so a
// lost, late, repeated, reordered or invented notification can cost a read, never a wrong record.
//
// The contract between the subscriptions the node makes (subscriber.ts) and the route that receives them
// (api/routes/watch.ts): the path and the header carrying each subscription's secret.
import type { BrokerApi } from './endpoint.ts';
import { entityType, ObserveError } from './observe.ts';

/** The route brokers POST notifications to; `:channel` names the subscription (not a secret). */
export const NOTIFY_ROUTE = '/watch/notify/:channel';
/** The URL path of a channel. */
export const notifyPath = (channel: string): string => `/watch/notify/${encodeURIComponent(channel)}`;
/** The header carrying the subscription's secret (NGSI-v2 `httpCustom.headers`, NGSI-LD `receiverInfo`). */
export const NOTIFY_TOKEN_HEADER = 'scriptorium-notify-token';
/** Entities one notification may name (brokers send one a change; more is refused). */
export const MAX_NOTIFIED_ENTITIES = 1000;

/** An entity a notification names: its id and type (NGSI-LD: the sorted set of its types, observe.ts). */
export interface EntityRef {
  id: string;
  type: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The entities a notification body names, or why it is not a notification of that API.
 * @example parseNotification('ngsi-v2', {subscriptionId: 's1', data: [{id: 'R1', type: 'Room'}]}) // {refs: [{id: 'R1', type: 'Room'}]}
 */
export function parseNotification(api: BrokerApi, body: unknown): { refs: EntityRef[] } | { error: string } {
  if (!isObject(body)) return { error: 'not a JSON object' };
  if (typeof body.subscriptionId !== 'string') return { error: 'no subscriptionId' };
  if (api === 'ngsi-ld' && body.type !== 'Notification') return { error: 'not an NGSI-LD Notification' };
  const data = body.data;
  if (!Array.isArray(data)) return { error: 'no data array' };
  if (data.length > MAX_NOTIFIED_ENTITIES) return { error: `more than ${MAX_NOTIFIED_ENTITIES} entities` };
  const refs: EntityRef[] = [];
  for (const e of data) {
    if (!isObject(e) || typeof e.id !== 'string' || e.id === '' || e.id.length > 2048)
      return { error: 'an entity without a string id' };
    try {
      refs.push({ id: e.id, type: entityType(api, e.type, e.id) });
    } catch (err) {
      if (err instanceof ObserveError) return { error: err.message };
      throw err;
    }
  }
  return { refs };
}
