// The NGSI-LD subset (ETSI GS CIM 009), answered as FIWARE Scorpio 5.0.3 answers it (checked against a real one:
// test/broker-conformance.test.ts; the differences found and fixed are in docs/ledger-watch.md):
// - `GET /ngsi-ld/v1/entities` with `limit` (default 50, at most 1000: 403 TooManyResults above; 0 only with
//   count), `offset`, `count=true` → `NGSILD-Results-Count`, `type` (one or several, comma-separated: an entity
//   with any of them), `id`, `idPattern`, `attrs`, `q` (a subset: `term op value` joined by `;`, on an attribute's
//   value or the entity's `modifiedAt`/`createdAt`). A query naming none of id, type, attrs, q or geometry is 400
//   BadRequestData (idPattern does not count, and `local=true` is no parameter of Scorpio's); `localOnly=true` is
//   500 (Scorpio 5.0.3's SQL for it is broken); a limit that is not a number is 404 (the framework's answer).
// - `GET /ngsi-ld/v1/types` (an EntityTypeList; `details=true`: the EntityType array).
// - Entities may have several types (`"type": ["Sensor", "Device"]`); attributes list in name order.
// - The `@context` travels in a `Link` header (Accept: application/json) or in each entity (application/ld+json).
//   Terms are kept as written: the test broker does not expand or compact JSON-LD.
// - Tenants are `NGSILD-Tenant`; reading an unknown tenant is 404 TenantNotFound.
// - Writes: create (409 on a duplicate), append (POST) / update (PATCH: attributes it does not have are ignored)
//   attributes, delete an entity or an attribute, batch upsert (replace, or `options=update`).
// - Subscriptions: `POST|GET /ngsi-ld/v1/subscriptions/`, `GET|PATCH|DELETE .../{id}`; `entities` entries need a
//   type (`*`: every type); `notificationTrigger` (without it, deletions are not notified); `receiverInfo` sent as
//   headers; `expiresAt`. Notifications: `{id, type: "Notification", subscriptionId, notifiedAt, data: [entity]}`,
//   the tenant in `NGSILD-Tenant`, a deleted entity with `deletedAt`.
// - Context source registrations: `POST /ngsi-ld/v1/csourceRegistrations/` (`information[].entities[].type`,
//   `endpoint`), `DELETE .../{id}`, and `GET` by `type` (one or several; a query naming none of id, type, attrs, q or
//   geometry is 400, as for entities). They are kept, not acted on: this broker forwards nothing. As in Scorpio
//   5.0.3, a count at `limit=0` is always 0 (its count comes with the page's rows); `limit=1` counts them all.
import { randomUUID } from 'node:crypto';
import { type BrokerRequest, empty, json, type Reply } from './http.ts';
import { parseTime, type StoredSubscription, type Subscriptions } from './notifications.ts';
import type { ChangeKind, EntityStore, StoredEntity, Tenant } from './store.ts';

export const CORE_CONTEXT = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context.jsonld';
const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 50;
const ATTR_TYPES = new Set([
  'Property',
  'Relationship',
  'GeoProperty',
  'LanguageProperty',
  'VocabProperty',
  'JsonProperty',
  'ListProperty',
  'ListRelationship',
]);
const RESERVED = new Set(['id', 'type', '@context', 'scope', 'createdAt', 'modifiedAt', 'deletedAt']);
const TRIGGERS = new Set([
  'entityCreated',
  'entityUpdated',
  'entityDeleted',
  'attributeCreated',
  'attributeUpdated',
  'attributeDeleted',
]);
/** What a subscription notifies without `notificationTrigger`: no deletion (checked on Scorpio 5.0.3). */
const DEFAULT_TRIGGERS = new Set<ChangeKind>(['create', 'update']);

const problem = (status: number, kind: string, title: string, detail = title, instanceId?: string): Reply =>
  json(status, {
    type: `https://uri.etsi.org/ngsi-ld/errors/${kind}`,
    title,
    detail,
    ...(instanceId ? { instanceId } : {}),
    status,
  });

class LdError extends Error {
  readonly reply: Reply;
  constructor(reply: Reply) {
    super('ngsi-ld error');
    this.reply = reply;
  }
}
const bad = (detail = 'Bad Request Data.') => new LdError(problem(400, 'BadRequestData', 'Bad Request Data.', detail));

/** The context URL of a request's `Link` header, or the core context. */
export function linkContext(header: string | string[] | undefined): string {
  const raw = Array.isArray(header) ? header[0] : header;
  const m = raw ? /<([^>]+)>\s*;[^,]*rel="?http:\/\/www\.w3\.org\/ns\/json-ld#context"?/.exec(raw) : null;
  return m ? (m[1] as string) : CORE_CONTEXT;
}

const linkHeader = (context: string) =>
  `<${context}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;

function isUri(id: unknown): id is string {
  return typeof id === 'string' && /^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>"]+$/.test(id) && id.length <= 256;
}

function checkAttr(name: string, raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null) throw bad(`The key ${name} is an invalid entry.`);
  const instances = Array.isArray(raw) ? raw : [raw];
  for (const inst of instances) {
    const t = (inst as { type?: unknown })?.type;
    if (typeof t !== 'string' || !ATTR_TYPES.has(t)) throw bad(`The key ${name} is an invalid entry.`);
    if (t === 'Relationship' && !('object' in inst)) throw bad(`The key ${name} is an invalid entry.`);
  }
  return raw as Record<string, unknown>;
}

/**
 * A page parameter, or the error Scorpio gives: a non-number is an empty 404 (the framework finds no method for
 * it), above the maximum 403 TooManyResults (its problem type ends with a space in Scorpio 5.0.3).
 */
function pageParam(req: BrokerRequest, name: 'limit' | 'offset'): number | undefined {
  const raw = req.query.get(name);
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw)) throw new LdError(empty(404));
  const n = Number(raw);
  if (name === 'limit' && n > MAX_LIMIT) throw new LdError(problem(403, 'TooManyResults ', 'Too many results'));
  return n;
}

const typesOf = (e: StoredEntity): string[] => e.types ?? [e.type];

/** One comparison of a `q` filter. */
interface QTerm {
  /** `modifiedAt` and `createdAt` are the entity's; anything else an attribute's value. */
  attr: string;
  op: '==' | '!=' | '>' | '>=' | '<' | '<=';
  value: string | number | boolean;
}

/** The `q` subset this broker evaluates: `term op value` joined by `;`; anything else is a 400. */
export function parseQ(raw: string): QTerm[] {
  const terms: QTerm[] = [];
  for (const part of raw.split(';')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(==|!=|>=|<=|>|<)(.+)$/.exec(part);
    if (!m) throw bad();
    const [, attr, op, rawValue] = m as unknown as [string, string, QTerm['op'], string];
    let value: QTerm['value'];
    if (/^".*"$/.test(rawValue)) value = rawValue.slice(1, -1);
    else if (rawValue === 'true' || rawValue === 'false') value = rawValue === 'true';
    else if (/^-?\d+(\.\d+)?$/.test(rawValue)) value = Number(rawValue);
    else if (parseTime(rawValue) !== undefined) value = rawValue;
    else throw bad();
    terms.push({ attr, op, value });
  }
  return terms;
}

function compare(a: unknown, op: QTerm['op'], b: string | number | boolean): boolean {
  if (typeof a !== typeof b) return op === '!=';
  const x = a as string | number | boolean;
  switch (op) {
    case '==':
      return x === b;
    case '!=':
      return x !== b;
    case '>':
      return x > b;
    case '>=':
      return x >= b;
    case '<':
      return x < b;
    case '<=':
      return x <= b;
  }
}

function matchesQ(e: StoredEntity, terms: QTerm[]): boolean {
  return terms.every((t) => {
    if (t.attr === 'modifiedAt' || t.attr === 'createdAt') {
      const at = parseTime(t.value);
      const own = t.attr === 'modifiedAt' ? e.modifiedAt : e.createdAt;
      return at !== undefined && own !== undefined && compare(own, t.op, at);
    }
    const a = e.attrs.get(t.attr);
    if (!a || Array.isArray(a)) return false;
    return compare(a.type === 'Relationship' ? a.object : a.value, t.op, t.value);
  });
}

/** Time as Scorpio writes it: microseconds, `Z`. */
const isoMicros = (ms: number) => new Date(ms).toISOString().replace(/Z$/, '000Z');

/** A context source registration as written, and the entity types it names. */
interface Registration {
  view: Record<string, unknown>;
  types: Set<string>;
}

export class NgsiLd {
  private readonly store: EntityStore;
  private readonly subscriptions: Subscriptions;
  private notificationSeq = 0;
  /** Context source registrations per tenant name, by id, as written. */
  private readonly registrations = new Map<string, Map<string, Registration>>();

  constructor(store: EntityStore, subscriptions: Subscriptions) {
    this.store = store;
    this.subscriptions = subscriptions;
    store.onChange((tenant, entity, kind) =>
      subscriptions.changed(tenant.name, entity, kind, (s) => this.notification(s, entity, kind)),
    );
  }

  handles(path: string): boolean {
    return path.startsWith('/ngsi-ld/v1/');
  }

  handle(req: BrokerRequest): Reply {
    try {
      return this.dispatch(req);
    } catch (err) {
      if (err instanceof LdError) return err.reply;
      throw err;
    }
  }

  private dispatch(req: BrokerRequest): Reply {
    const { method } = req;
    const path = req.path.replace(/\/+$/, '') || '/';
    if (path === '/ngsi-ld/v1/entities') {
      if (method === 'GET') return this.query(req);
      if (method === 'POST') return this.create(req);
    }
    if (path === '/ngsi-ld/v1/types' && method === 'GET') return this.types(req);
    if (path === '/ngsi-ld/v1/entityOperations/upsert' && method === 'POST') return this.upsert(req);
    if (path === '/ngsi-ld/v1/subscriptions') {
      if (method === 'POST') return this.subscribe(req);
      if (method === 'GET') return this.listSubscriptions(req);
    }
    if (path === '/ngsi-ld/v1/csourceRegistrations') {
      if (method === 'POST') return this.register(req);
      if (method === 'GET') return this.queryRegistrations(req);
    }
    const r = /^\/ngsi-ld\/v1\/csourceRegistrations\/([^/]+)$/.exec(path);
    if (r && method === 'DELETE') return this.deleteRegistration(req, decodeURIComponent(r[1] as string));
    const s = /^\/ngsi-ld\/v1\/subscriptions\/([^/]+)$/.exec(path);
    if (s) {
      const id = decodeURIComponent(s[1] as string);
      if (method === 'GET') return this.getSubscription(req, id);
      if (method === 'PATCH') return this.patchSubscription(req, id);
      if (method === 'DELETE') return this.deleteSubscription(req, id);
    }
    const m = /^\/ngsi-ld\/v1\/entities\/([^/]+)(\/attrs(?:\/([^/]+))?)?$/.exec(path);
    if (m) {
      const id = decodeURIComponent(m[1] as string);
      const attr = m[3] === undefined ? undefined : decodeURIComponent(m[3]);
      if (!m[2] && method === 'GET') return this.getOne(req, id);
      if (!m[2] && method === 'DELETE') return this.deleteOne(req, id);
      if (m[2] && attr === undefined && (method === 'PATCH' || method === 'POST'))
        return this.writeAttrs(req, id, method);
      if (attr !== undefined && method === 'DELETE') return this.deleteAttr(req, id, attr);
    }
    return problem(404, 'ResourceNotFound', 'Resource not found.', `${method} ${path}`);
  }

  private tenantName(req: BrokerRequest): string {
    const raw = req.headers['ngsild-tenant'];
    const name = raw === undefined ? '' : String(raw);
    if (name !== '' && !/^[A-Za-z0-9_-]{1,50}$/.test(name)) throw bad('Invalid tenant name');
    return name;
  }

  private tenant(req: BrokerRequest, create: boolean): Tenant {
    const name = this.tenantName(req);
    const t = this.store.tenant(name, create || name === '');
    if (!t) throw new LdError(problem(404, 'TenantNotFound', 'Tenant not found.', `${name} tenant was not found`));
    return t;
  }

  private render(e: StoredEntity, context: string | undefined, attrs: string[] | undefined): string {
    if (!attrs && context === undefined) {
      if (e.json === undefined) e.json = JSON.stringify(this.entityObject(e, undefined));
      return e.json;
    }
    const out = this.entityObject(e, attrs);
    if (context !== undefined) out['@context'] = context;
    return JSON.stringify(out);
  }

  /** The entity as Scorpio renders it: one type as a string, several as an array; attributes in name order. */
  private entityObject(e: StoredEntity, attrs: string[] | undefined): Record<string, unknown> {
    const types = typesOf(e);
    const out: Record<string, unknown> = { id: e.id, type: types.length === 1 ? types[0] : types };
    for (const n of [...e.attrs.keys()].sort()) if (!attrs || attrs.includes(n)) out[n] = e.attrs.get(n);
    return out;
  }

  private accepts(req: BrokerRequest): boolean {
    const accept = String(req.headers.accept ?? '');
    return accept.includes('application/ld+json') && !/^application\/json/.test(accept);
  }

  private replyHeaders(req: BrokerRequest): Record<string, string> {
    return this.accepts(req)
      ? { 'Content-Type': 'application/ld+json' }
      : { 'Content-Type': 'application/json', Link: linkHeader(linkContext(req.headers.link)) };
  }

  private query(req: BrokerRequest): Reply {
    const localOnly = req.query.get('localOnly');
    if (localOnly !== null && localOnly !== 'false')
      return problem(500, 'InternalError', 'Internal error', 'ERROR: syntax error at or near "as" (42601)');
    const list = (name: string) => req.query.get(name)?.split(',').filter(Boolean);
    const types = list('type');
    const ids = list('id');
    const attrs = list('attrs');
    const q = req.query.get('q');
    if (!types && !ids && !attrs && q === null && req.query.get('geometry') === null) throw bad();
    const limit = pageParam(req, 'limit') ?? DEFAULT_LIMIT;
    const offset = pageParam(req, 'offset') ?? 0;
    const count = req.query.get('count') === 'true';
    if (limit === 0 && !count) throw bad('Limit can only be 0 if count is true.');
    const idPatternRaw = req.query.get('idPattern');
    let idPattern: RegExp | undefined;
    if (idPatternRaw !== null) {
      try {
        idPattern = new RegExp(idPatternRaw);
      } catch {
        throw bad();
      }
    }
    const terms = q === null ? undefined : parseQ(q);
    const tenant = this.tenant(req, false);
    // By ids: looked up, not scanned (kept in creation order).
    const candidates = ids ? ids.flatMap((id) => tenant.withId(id)).sort((a, b) => a.seq - b.seq) : tenant.list();
    const matching = candidates.filter(
      (e) =>
        (!types || typesOf(e).some((t) => types.includes(t))) &&
        (!ids || ids.includes(e.id)) &&
        (!idPattern || idPattern.test(e.id)) &&
        (!attrs || attrs.some((a) => e.attrs.has(a))) &&
        (!terms || matchesQ(e, terms)),
    );
    const context = this.accepts(req) ? linkContext(req.headers.link) : undefined;
    // A count alone (limit 0) is an empty body without a content type.
    if (limit === 0) return empty(200, { 'NGSILD-Results-Count': String(matching.length) });
    const page = matching.slice(offset, offset + limit);
    const headers = this.replyHeaders(req);
    if (count) headers['NGSILD-Results-Count'] = String(matching.length);
    return { status: 200, headers, body: `[${page.map((e) => this.render(e, context, attrs)).join(',')}]` };
  }

  private types(req: BrokerRequest): Reply {
    const tenant = this.tenant(req, false);
    const byType = new Map<string, Set<string>>();
    for (const e of tenant.list())
      for (const t of typesOf(e)) {
        const names = byType.get(t) ?? new Set<string>();
        for (const n of e.attrs.keys()) names.add(n);
        byType.set(t, names);
      }
    const names = [...byType.keys()].sort();
    const headers = this.replyHeaders(req);
    if (req.query.get('details') === 'true')
      return json(
        200,
        names.map((t) => {
          const attributeNames = [...(byType.get(t) as Set<string>)].sort();
          return {
            id: `ngsi-ld:default-context/${t}`,
            type: 'EntityType',
            attributeNames: attributeNames.length === 1 ? attributeNames[0] : attributeNames,
            typeName: t,
          };
        }),
        headers,
      );
    return json(
      200,
      { id: `urn:ngsi-ld:EntityTypeList:${tenant.version}`, type: 'EntityTypeList', typeList: names },
      headers,
    );
  }

  private parse(req: BrokerRequest): Record<string, unknown> | unknown[] {
    const type = String(req.headers['content-type'] ?? '');
    if (
      !type.startsWith('application/json') &&
      !type.startsWith('application/ld+json') &&
      !type.includes('merge-patch')
    )
      throw new LdError(problem(415, 'UnsupportedMediaType', 'Unsupported Media Type', type));
    try {
      const v = JSON.parse(req.body);
      if (typeof v !== 'object' || v === null) throw new Error('not an object');
      return v as Record<string, unknown>;
    } catch {
      throw new LdError(problem(400, 'InvalidRequest', 'Invalid request.', 'JSON Parse Error'));
    }
  }

  private build(raw: unknown): { id: string; types: string[]; attrs: Map<string, Record<string, unknown>> } {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('Entity must be an object');
    const e = raw as Record<string, unknown>;
    if (!isUri(e.id)) throw bad('IDs need to be URIs');
    const types = typeof e.type === 'string' ? [e.type] : Array.isArray(e.type) ? e.type : [];
    if (types.length === 0 || !types.every((t): t is string => typeof t === 'string' && t !== ''))
      throw bad('Entity type missing');
    const attrs = new Map<string, Record<string, unknown>>();
    for (const [n, v] of Object.entries(e)) if (!RESERVED.has(n)) attrs.set(n, checkAttr(n, v));
    return { id: e.id, types: [...new Set(types)], attrs };
  }

  private stored(built: ReturnType<NgsiLd['build']>): StoredEntity {
    return {
      id: built.id,
      type: built.types[0] as string,
      ...(built.types.length > 1 ? { types: built.types } : {}),
      attrs: built.attrs,
      servicePath: '/',
      seq: this.store.nextSeq(),
      json: undefined,
    };
  }

  private create(req: BrokerRequest): Reply {
    const built = this.build(this.parse(req));
    const tenant = this.tenant(req, true);
    if (tenant.get(built.id, undefined))
      return problem(409, 'AlreadyExists', 'Already exists.', `${built.id} already exists`, built.id);
    tenant.create(this.stored(built));
    return empty(201, { Location: `/ngsi-ld/v1/entities/${encodeURIComponent(built.id)}` });
  }

  private upsert(req: BrokerRequest): Reply {
    const body = this.parse(req);
    if (!Array.isArray(body)) throw bad('Batch upsert needs an array of entities');
    const mode = req.query.get('options') === 'update' ? 'update' : 'replace';
    const tenant = this.tenant(req, true);
    const created: string[] = [];
    for (const raw of body) {
      const built = this.build(raw);
      const existing = tenant.get(built.id, undefined);
      if (!existing) {
        tenant.create(this.stored(built));
        created.push(built.id);
        continue;
      }
      if (mode === 'replace') existing.attrs.clear();
      for (const [n, a] of built.attrs) existing.attrs.set(n, a);
      tenant.touch(existing);
    }
    return created.length > 0 ? json(201, created) : empty(204);
  }

  private find(req: BrokerRequest, id: string): { tenant: Tenant; entity: StoredEntity } {
    const tenant = this.tenant(req, false);
    const entity = tenant.get(id, undefined);
    if (!entity)
      throw new LdError(
        json(404, {
          type: 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound',
          title: 'Resource not found.',
          detail: `${id} was not found`,
          instanceId: id,
          status: 404,
        }),
      );
    return { tenant, entity };
  }

  private getOne(req: BrokerRequest, id: string): Reply {
    const { entity } = this.find(req, id);
    const context = this.accepts(req) ? linkContext(req.headers.link) : undefined;
    return {
      status: 200,
      headers: this.replyHeaders(req),
      body: this.render(entity, context, req.query.get('attrs')?.split(',').filter(Boolean)),
    };
  }

  private deleteOne(req: BrokerRequest, id: string): Reply {
    const { tenant, entity } = this.find(req, id);
    tenant.delete(entity);
    return empty(204);
  }

  private writeAttrs(req: BrokerRequest, id: string, method: string): Reply {
    const { tenant, entity } = this.find(req, id);
    const body = this.parse(req);
    if (Array.isArray(body)) throw bad('Attributes must be an object');
    const attrs = Object.entries(body).filter(([n]) => !RESERVED.has(n));
    // PATCH updates the attributes the entity has and ignores the others (204 either way, as Scorpio answers).
    const written = method === 'PATCH' ? attrs.filter(([n]) => entity.attrs.has(n)) : attrs;
    for (const [n, v] of written) entity.attrs.set(n, checkAttr(n, v));
    if (written.length > 0) tenant.touch(entity);
    return empty(204);
  }

  private deleteAttr(req: BrokerRequest, id: string, attr: string): Reply {
    const { tenant, entity } = this.find(req, id);
    if (!entity.attrs.delete(attr)) return problem(404, 'ResourceNotFound', 'Resource not found.');
    tenant.touch(entity);
    return empty(204);
  }

  // ---- subscriptions ---------------------------------------------------------------------------------------

  private subscribe(req: BrokerRequest): Reply {
    const body = this.parse(req);
    if (Array.isArray(body)) throw bad();
    const tenant = this.tenant(req, true).name;
    const id = typeof body.id === 'string' ? body.id : `urn:${randomUUID()}`;
    if (!isUri(id)) throw bad('IDs need to be URIs');
    if (this.subscriptions.get(tenant, id))
      return problem(409, 'AlreadyExists', 'Already exists.', `${id} already exists`);
    this.subscriptions.add(this.buildSubscription(tenant, id, body, linkContext(req.headers.link), true));
    return empty(201, { Location: `/ngsi-ld/v1/subscriptions/${id}` });
  }

  private buildSubscription(
    tenant: string,
    id: string,
    body: Record<string, unknown>,
    context: string,
    tenantHeader: boolean,
  ): StoredSubscription {
    if (body.type !== undefined && body.type !== 'Subscription') throw bad();
    const entities = body.entities;
    if (entities !== undefined && !Array.isArray(entities)) throw bad();
    const selectors = (entities ?? []) as Array<Record<string, unknown>>;
    for (const sel of selectors) {
      if (typeof sel !== 'object' || sel === null) throw bad();
      for (const k of Object.keys(sel))
        if (!['id', 'type', 'idPattern'].includes(k)) throw bad('Unknown entry for entities');
      if (typeof sel.type !== 'string') throw bad('Entities entry in subscriptions need a type');
    }
    const watched = body.watchedAttributes;
    if (selectors.length === 0 && !Array.isArray(watched)) throw bad();
    const notification = body.notification as Record<string, unknown> | undefined;
    const endpoint = notification?.endpoint as Record<string, unknown> | undefined;
    if (!endpoint || typeof endpoint.uri !== 'string') throw bad('A subscription needs a notification endpoint entry');
    let uri: URL;
    try {
      uri = new URL(endpoint.uri);
    } catch {
      throw bad('Invalid endpoint');
    }
    if (uri.protocol !== 'http:' && uri.protocol !== 'https:') throw bad('Unsupport endpoint scheme');
    const triggers = body.notificationTrigger;
    if (triggers !== undefined && (!Array.isArray(triggers) || !triggers.every((t) => TRIGGERS.has(t))))
      throw bad(`Invalid value for notificationTrigger. Valid values are ${[...TRIGGERS].join(',')}`);
    const kinds = new Set<ChangeKind>(DEFAULT_TRIGGERS);
    if (Array.isArray(triggers)) {
      kinds.clear();
      for (const t of triggers as string[]) {
        if (t === 'entityCreated') kinds.add('create');
        else if (t === 'entityDeleted') kinds.add('delete');
        else kinds.add('update');
      }
    }
    let expiresAt: number | undefined;
    if (body.expiresAt !== undefined) {
      expiresAt = parseTime(body.expiresAt);
      if (expiresAt === undefined) throw bad('Failed to parse expiresAt');
    }
    const headers: Record<string, string> = { accept: String(endpoint.accept ?? 'application/json') };
    headers.link = linkHeader(context);
    // Scorpio 5.0.3 sends the tenant with the notifications of a subscription as created, not once it is PATCHed.
    if (tenant && tenantHeader) headers['ngsild-tenant'] = tenant;
    const receiverInfo = endpoint.receiverInfo;
    if (receiverInfo !== undefined) {
      if (!Array.isArray(receiverInfo)) throw bad();
      for (const kv of receiverInfo as Array<Record<string, unknown>>) {
        if (typeof kv?.key !== 'string' || typeof kv.value !== 'string') throw bad();
        headers[kv.key.toLowerCase()] = kv.value;
      }
    }
    const idPatterns = selectors.map((sel) => (typeof sel.idPattern === 'string' ? new RegExp(sel.idPattern) : null));
    const view: Record<string, unknown> = { id, type: 'Subscription', jsonldContext: context };
    for (const k of ['description', 'entities', 'watchedAttributes', 'q', 'expiresAt', 'notification'])
      if (body[k] !== undefined) view[k] = body[k];
    if (Array.isArray(triggers)) view.notificationTrigger = triggers;
    return {
      id,
      tenant,
      url: uri.toString(),
      headers,
      expiresAt,
      view,
      timesSent: 0,
      timesFailed: 0,
      matches: (e, kind) => {
        if (!kinds.has(kind)) return false;
        if (selectors.length === 0) return true;
        return selectors.some((sel, k) => {
          const t = sel.type as string;
          if (t !== '*' && !typesOf(e).includes(t)) return false;
          if (typeof sel.id === 'string' && !sel.id.split(',').includes(e.id)) return false;
          const pattern = idPatterns[k];
          return !pattern || pattern.test(e.id);
        });
      },
    };
  }

  private notification(s: StoredSubscription, e: StoredEntity, kind: ChangeKind): string {
    const entity = this.entityObject(e, undefined);
    if (kind === 'delete') entity.deletedAt = isoMicros(Date.now());
    return JSON.stringify({
      id: `notification:${this.notificationSeq++}`,
      type: 'Notification',
      subscriptionId: s.id,
      notifiedAt: isoMicros(Date.now()),
      data: [entity],
    });
  }

  private subscriptionView(s: StoredSubscription): Record<string, unknown> {
    const expired = s.expiresAt !== undefined && s.expiresAt <= Date.now();
    return {
      ...s.view,
      ...(s.lastNotification ? { lastNotification: isoMicros(s.lastNotification) } : {}),
      ...(s.lastSuccess ? { lastSuccess: isoMicros(s.lastSuccess) } : {}),
      ...(s.lastFailure ? { lastFailure: isoMicros(s.lastFailure) } : {}),
      timesFailed: s.timesFailed,
      timesSent: s.timesSent,
      status: expired ? 'expired' : 'active',
    };
  }

  private listSubscriptions(req: BrokerRequest): Reply {
    const tenant = this.tenant(req, false).name;
    const limit = pageParam(req, 'limit') ?? DEFAULT_LIMIT;
    const offset = pageParam(req, 'offset') ?? 0;
    const all = this.subscriptions.list(tenant);
    const headers = this.replyHeaders(req);
    if (req.query.get('count') === 'true') headers['NGSILD-Results-Count'] = String(all.length);
    return json(
      200,
      all.slice(offset, offset + limit).map((s) => this.subscriptionView(s)),
      headers,
    );
  }

  private subscription(req: BrokerRequest, id: string): StoredSubscription {
    const s = this.subscriptions.get(this.tenant(req, false).name, id);
    if (!s) throw new LdError(problem(404, 'ResourceNotFound', 'Resource not found.', `${id} was not found`));
    return s;
  }

  private getSubscription(req: BrokerRequest, id: string): Reply {
    return json(200, this.subscriptionView(this.subscription(req, id)), this.replyHeaders(req));
  }

  private patchSubscription(req: BrokerRequest, id: string): Reply {
    const s = this.subscription(req, id);
    const body = this.parse(req);
    if (Array.isArray(body)) throw bad();
    const merged = { ...s.view, ...body, id };
    const next = this.buildSubscription(s.tenant, id, merged, String(s.view.jsonldContext), false);
    next.timesSent = s.timesSent;
    next.timesFailed = s.timesFailed;
    this.subscriptions.add(next);
    return empty(204);
  }

  private deleteSubscription(req: BrokerRequest, id: string): Reply {
    this.subscription(req, id);
    this.subscriptions.delete(this.tenant(req, false).name, id);
    return empty(204);
  }

  private register(req: BrokerRequest): Reply {
    const body = this.parse(req);
    if (Array.isArray(body)) throw bad();
    const information = body.information;
    if (!Array.isArray(information) || information.length === 0 || typeof body.endpoint !== 'string') throw bad();
    const types = new Set<string>();
    for (const info of information) {
      const entities = (info as { entities?: unknown })?.entities;
      if (entities === undefined) continue;
      if (!Array.isArray(entities)) throw bad();
      for (const e of entities) {
        const t = (e as { type?: unknown })?.type;
        if (typeof t !== 'string' || t === '') throw bad();
        types.add(t);
      }
    }
    if (body.id !== undefined && !isUri(body.id)) throw bad('IDs need to be URIs');
    const id = typeof body.id === 'string' ? body.id : `urn:ngsi-ld:csourceregistration:${randomUUID()}`;
    const tenant = this.tenant(req, true).name;
    const own = this.registrations.get(tenant) ?? new Map<string, Registration>();
    this.registrations.set(tenant, own);
    if (own.has(id)) return problem(409, 'AlreadyExists', 'Already exists.', `${id} already exists`, id);
    const { '@context': _context, ...view } = body;
    own.set(id, { view: { ...view, id, type: 'ContextSourceRegistration' }, types });
    return empty(201, { Location: `/ngsi-ld/v1/csourceRegistrations/${encodeURIComponent(id)}` });
  }

  private queryRegistrations(req: BrokerRequest): Reply {
    const list = (name: string) => req.query.get(name)?.split(',').filter(Boolean);
    const types = list('type');
    const ids = list('id');
    if (!types && !ids && !list('attrs') && req.query.get('q') === null && req.query.get('geometry') === null)
      throw bad();
    const limit = pageParam(req, 'limit') ?? DEFAULT_LIMIT;
    const offset = pageParam(req, 'offset') ?? 0;
    const count = req.query.get('count') === 'true';
    const tenant = this.tenant(req, false).name;
    const matching = [...(this.registrations.get(tenant)?.values() ?? [])].filter(
      (r) => (!types || types.some((t) => r.types.has(t))) && (!ids || ids.includes(String(r.view.id))),
    );
    // Scorpio 5.0.3 counts the rows of the page it reads: nothing at limit 0.
    if (limit === 0) return empty(200, { 'NGSILD-Results-Count': '0' });
    const headers = this.replyHeaders(req);
    if (count) headers['NGSILD-Results-Count'] = String(matching.length);
    return json(
      200,
      matching.slice(offset, offset + limit).map((r) => r.view),
      headers,
    );
  }

  private deleteRegistration(req: BrokerRequest, id: string): Reply {
    const own = this.registrations.get(this.tenant(req, false).name);
    if (!own?.delete(id)) return problem(404, 'ResourceNotFound', 'Resource not found.', `${id} was not found`);
    return empty(204);
  }
}
