// What the watcher compares: each attribute of an entity as one canonical JSON string (RFC 8785)
// of its type and its value, read from a broker's normalized representation.
//
// - NGSI-v2 (Orion): `{type, value}`; `metadata` is left out (brokers set metadata of their own,
//   such as TimeInstant, and federation rewrites it).
// - NGSI-LD: `{type, <value member>}` where the value member is what the attribute type defines:
//   `value` (Property, GeoProperty), `object` (Relationship), `languageMap` (LanguageProperty),
//   `vocab` (VocabProperty), `json` (JsonProperty), `valueList`/`objectList` (lists). Sub-properties
//   (observedAt, unitCode, …) and system attributes are left out. A multi-attribute (an array of
//   instances) compares as the array of its instances' forms, each with its `datasetId`, sorted.
//
// Because the form is canonical, key order inside objects does not matter and 1.0 equals 1, while
// the number 1 and the string "1" differ (type and JSON value both count).
//
// An NGSI-LD entity may have several types (`"type": ["Sensor", "Device"]`): its type is the set of them, written
// as one string, the names sorted and joined by commas ("Device,Sensor"; a type name holds no comma, the API's own
// list separator), so two brokers listing the same types in another order hold the same entity.
import { canonicalize } from '@scriptorium/ledger-protocol';
import type { BrokerApi } from './endpoint.ts';

/** One entity as a broker reported it: attribute names and their canonical forms, in parallel. */
export interface ObservedEntity {
  id: string;
  type: string;
  names: string[];
  forms: string[];
}

/**
 * One string for an entity's id and type together (Orion allows one id with two types): the type's length,
 * a colon, the type, the id — unambiguous whatever characters either holds.
 */
export const entityKey = (type: string, id: string): string => `${type.length}:${type}${id}`;

/** The id and type back from `entityKey`. */
export function splitEntityKey(key: string): { id: string; type: string } {
  const colon = key.indexOf(':');
  const start = colon + 1;
  const end = start + Number(key.slice(0, colon));
  return { type: key.slice(start, end), id: key.slice(end) };
}

const V2_SKIP = new Set(['id', 'type']);
const LD_SKIP = new Set(['id', 'type', '@context', 'scope', 'createdAt', 'modifiedAt', 'deletedAt']);
const LD_MEMBER: Record<string, string> = {
  Property: 'value',
  GeoProperty: 'value',
  Relationship: 'object',
  LanguageProperty: 'languageMap',
  VocabProperty: 'vocab',
  JsonProperty: 'json',
  ListProperty: 'valueList',
  ListRelationship: 'objectList',
};

/**
 * A copy of a JSON value with every object's keys inserted in RFC 8785 order, or undefined when an
 * object has an array-index key ("7"): JavaScript lists those first whatever the insertion order,
 * so JSON.stringify of the copy would not be canonical.
 */
function sortedCopy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const v = sortedCopy(value[i]);
      if (v === undefined) return undefined;
      out[i] = v;
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    if (/^(0|[1-9]\d*)$/.test(key)) return undefined;
    const v = sortedCopy((value as Record<string, unknown>)[key]);
    if (v === undefined) return undefined;
    out[key] = v;
  }
  return out;
}

/**
 * Canonical `{"type":T,"<member>":V}` (RFC 8785), built by JSON.stringify so the string is flat:
 * a string assembled by concatenation is a tree of pieces in V8, about three times the memory,
 * and the watcher holds a million of them for the primary. Numbers and strings serialize as JCS
 * requires (both use ECMAScript's JSON serialization). Object keys with array-index names fall back
 * to canonicalize(), copied once to flatten it.
 */
function form(type: string, member: string, value: unknown): string {
  const v = value === undefined ? null : value;
  const copy = sortedCopy(v);
  if (copy !== undefined || v === null)
    return JSON.stringify(member < 'type' ? { [member]: copy ?? null, type } : { type, [member]: copy ?? null });
  const text =
    member < 'type'
      ? `{"${member}":${canonicalize(v)},"type":${JSON.stringify(type)}}`
      : `{"type":${JSON.stringify(type)},"${member}":${canonicalize(v)}}`;
  return Buffer.from(text, 'utf8').toString('utf8');
}

/** An entity the watcher cannot read; `entityId` when at least its id could be read. */
export class ObserveError extends Error {
  readonly entityId: string | undefined;
  constructor(message: string, entityId?: string) {
    super(message);
    this.entityId = entityId;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * An entity's type: NGSI-v2's string; NGSI-LD's one type or set of types, as its sorted names joined by commas.
 * @example entityType('ngsi-ld', ['Sensor', 'Device'], 'urn:x') // 'Device,Sensor'
 */
export function entityType(api: BrokerApi, raw: unknown, id: string): string {
  if (typeof raw === 'string' && raw !== '' && (api === 'ngsi-v2' || !raw.includes(','))) return raw;
  if (api === 'ngsi-ld' && Array.isArray(raw) && raw.length > 0)
    if (raw.every((t) => typeof t === 'string' && t !== '' && !t.includes(',')))
      return [...new Set(raw as string[])].sort().join(',');
  throw new ObserveError(`entity ${id} has no valid type`, id);
}

function checkEntity(api: BrokerApi, raw: unknown): { entity: Record<string, unknown>; id: string; type: string } {
  if (!isObject(raw)) throw new ObserveError('an entity is not a JSON object');
  if (typeof raw.id !== 'string' || raw.id === '') throw new ObserveError('an entity has no string id');
  return { entity: raw, id: raw.id, type: entityType(api, raw.type, raw.id) };
}

function v2Form(entityId: string, name: string, attr: unknown): string {
  if (!isObject(attr)) throw new ObserveError(`entity ${entityId}: attribute ${name} is not an object`, entityId);
  if (typeof attr.type !== 'string')
    throw new ObserveError(`entity ${entityId}: attribute ${name} has no type`, entityId);
  return form(attr.type, 'value', attr.value);
}

function ldInstanceForm(entityId: string, name: string, inst: unknown, withDataset: boolean): string {
  if (!isObject(inst) || typeof inst.type !== 'string')
    throw new ObserveError(`entity ${entityId}: attribute ${name} is not an NGSI-LD attribute`, entityId);
  const member = LD_MEMBER[inst.type];
  if (!member) throw new ObserveError(`entity ${entityId}: attribute ${name} has unknown type ${inst.type}`, entityId);
  if (!withDataset) return form(inst.type, member, inst[member]);
  return canonicalize({ type: inst.type, [member]: inst[member] ?? null, datasetId: inst.datasetId ?? null });
}

function ldForm(entityId: string, name: string, attr: unknown): string {
  if (!Array.isArray(attr)) return ldInstanceForm(entityId, name, attr, false);
  const forms = attr.map((inst) => ldInstanceForm(entityId, name, inst, true)).sort();
  return `[${forms.join(',')}]`;
}

/**
 * Reads one entity of a broker's listing. Throws ObserveError on a shape no broker would send: the watcher reports
 * that entity (with its id when it has one) and judges the rest of the broker.
 * @example observeEntity('ngsi-v2', {id: 'R1', type: 'Room', t: {type: 'Number', value: 1}}).forms // ['{"type":"Number","value":1}']
 */
export function observeEntity(api: BrokerApi, raw: unknown): ObservedEntity {
  const { entity: e, id, type } = checkEntity(api, raw);
  const names: string[] = [];
  const forms: string[] = [];
  const skip = api === 'ngsi-v2' ? V2_SKIP : LD_SKIP;
  for (const name of Object.keys(e)) {
    if (skip.has(name)) continue;
    names.push(name);
    forms.push(api === 'ngsi-v2' ? v2Form(id, name, e[name]) : ldForm(id, name, e[name]));
  }
  return { id, type, names, forms };
}
