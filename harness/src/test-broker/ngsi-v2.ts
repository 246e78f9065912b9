// The NGSI-v2 subset the watcher and the tests use, answered as Orion answers it: entity listing
// with limit/offset paging (default 20, at most 1000), `options=count` → `Fiware-Total-Count`,
// `attrs`, `metadata`, `type`, `id`, `idPattern`, `options=keyValues|values|skipForwarding`;
// entity create/read/update/delete and `POST /v2/op/update`; tenants (`Fiware-Service`, lower-cased)
// and service paths (`Fiware-ServicePath`; a query without one sees every path, `/#` suffix
// recurses). Error bodies are Orion's `{error, description}`.
// `q` is evaluated for the system attributes `dateCreated` and `dateModified` compared with a time
// (`dateModified>2026-11-27T06:00:00.000Z`: what an incremental read needs); other `q` filters are a 400 here.
// Subscriptions (Orion's documentation; no Orion runs here): `POST|GET /v2/subscriptions`, `GET|PATCH|DELETE
// /v2/subscriptions/{id}` (24 hex digits); subject entities by `id`/`idPattern` and `type`/`typePattern`;
// `condition.alterationTypes` (default entityCreate and entityChange: deletions only when asked); `notification.http`
// or `httpCustom` (its headers sent); `expires`; notifications `{subscriptionId, data: [entity]}` with
// `Fiware-Service`, `Fiware-ServicePath` and `Ngsiv2-AttrsFormat: normalized`.
import { randomBytes, randomUUID } from 'node:crypto';
import { type BrokerRequest, empty, json, type Reply } from './http.ts';
import { parseTime, type StoredSubscription, type Subscriptions } from './notifications.ts';
import type { ChangeKind, EntityStore, StoredEntity, Tenant } from './store.ts';

const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 20;
const NAME = /^[^<>"'=;()\s&?/#]{1,256}$/;
const TENANT = /^[A-Za-z0-9_]{1,50}$/;
const PATH_PART = /^[A-Za-z0-9_]{1,50}$/;
const LIST_OPTIONS = new Set(['count', 'keyValues', 'values', 'unique', 'skipForwarding', 'sysAttrs']);
const ALTERATIONS = new Set(['entityCreate', 'entityUpdate', 'entityChange', 'entityDelete']);

const badRequest = (description: string): Reply => json(400, { error: 'BadRequest', description });
const notFound = (): Reply =>
  json(404, { error: 'NotFound', description: 'The requested entity has not been found. Check type and id' });

class V2Error extends Error {
  readonly reply: Reply;
  constructor(reply: Reply) {
    super('ngsi-v2 error');
    this.reply = reply;
  }
}

function tenantName(req: BrokerRequest): string {
  const raw = req.headers['fiware-service'];
  if (raw === undefined || raw === '') return '';
  const name = String(raw);
  if (!TENANT.test(name)) throw new V2Error(badRequest('bad character in tenant name'));
  return name.toLowerCase();
}

/** Service paths of a query: absent → every path; `/a/#` → /a and below; up to 10, comma-separated. */
function queryPaths(req: BrokerRequest): Array<{ path: string; recursive: boolean }> | undefined {
  const raw = req.headers['fiware-servicepath'];
  if (raw === undefined || raw === '') return undefined;
  const parts = String(raw)
    .split(',')
    .map((s) => s.trim());
  if (parts.length > 10)
    throw new V2Error(badRequest('too many service paths - a maximum of ten service paths is allowed'));
  return parts.map((p) => {
    const recursive = p.endsWith('/#');
    const base = recursive ? p.slice(0, -2) || '/' : p;
    checkPath(base);
    return { path: base, recursive };
  });
}

/** The one service path of a write: absent → '/'; no `#`. */
function writePath(req: BrokerRequest): string {
  const raw = req.headers['fiware-servicepath'];
  if (raw === undefined || raw === '') return '/';
  const p = String(raw).trim();
  if (p.includes(',') || p.includes('#'))
    throw new V2Error(badRequest('more than one service path in context update request'));
  checkPath(p);
  return p;
}

function checkPath(p: string): void {
  if (!p.startsWith('/'))
    throw new V2Error(badRequest('Only /absolute/ Service Paths allowed [a service path must begin with /]'));
  if (p === '/') return;
  const parts = p.slice(1).split('/');
  if (parts.length > 10) throw new V2Error(badRequest('too many components in ServicePath'));
  for (const part of parts)
    if (!PATH_PART.test(part))
      throw new V2Error(badRequest('a component of ServicePath contains an illegal character'));
}

function inPaths(entity: StoredEntity, paths: ReturnType<typeof queryPaths>): boolean {
  if (!paths) return true;
  for (const { path, recursive } of paths) {
    if (entity.servicePath === path) return true;
    if (recursive && (path === '/' || entity.servicePath.startsWith(`${path}/`))) return true;
  }
  return false;
}

function pageParam(req: BrokerRequest, name: 'limit' | 'offset'): number | undefined {
  const raw = req.query.get(name);
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw)) throw new V2Error(badRequest(`Bad pagination ${name}: /${raw}/ [must be a decimal number]`));
  const n = Number(raw);
  if (name === 'limit' && n === 0)
    throw new V2Error(badRequest(`Bad pagination limit: /${raw}/ [a value of ZERO is unacceptable]`));
  if (name === 'limit' && n > MAX_LIMIT)
    throw new V2Error(badRequest(`Bad pagination limit: /${raw}/ [max: ${MAX_LIMIT}]`));
  return n;
}

function optionSet(req: BrokerRequest, allowed: Set<string>): Set<string> {
  const raw = req.query.get('options');
  const set = new Set<string>();
  if (raw === null || raw === '') return set;
  for (const o of raw.split(',')) {
    if (!allowed.has(o)) throw new V2Error(badRequest('Invalid value for URI param /options/'));
    set.add(o);
  }
  return set;
}

/** The `q` filters evaluated here: `dateCreated` or `dateModified` compared with a time, joined by `;`. */
function parseDateQ(raw: string): Array<(e: StoredEntity) => boolean> {
  return raw.split(';').map((part) => {
    const m = /^(dateCreated|dateModified)(>=|<=|>|<)(.+)$/.exec(part);
    const at = m ? parseTime(m[3]) : undefined;
    if (!m || at === undefined) throw new V2Error(badRequest('invalid query expression'));
    const field = m[1] === 'dateCreated' ? 'createdAt' : 'modifiedAt';
    const op = m[2];
    return (e: StoredEntity) => {
      const own = e[field] ?? 0;
      return op === '>' ? own > at : op === '>=' ? own >= at : op === '<' ? own < at : own <= at;
    };
  });
}

const list = (raw: string | null): string[] | undefined =>
  raw === null || raw === '' ? undefined : raw.split(',').filter(Boolean);

/** Orion's default attribute type for a value written without one. */
export function defaultType(value: unknown): string {
  if (typeof value === 'number') return 'Number';
  if (typeof value === 'string') return 'Text';
  if (typeof value === 'boolean') return 'Boolean';
  if (value === null) return 'None';
  return 'StructuredValue';
}

/** A written attribute in normalized form ({type, value, metadata}); keyValues writes are bare values. */
function normalizeAttr(name: string, raw: unknown, keyValues: boolean): Record<string, unknown> {
  if (!NAME.test(name)) throw new V2Error(badRequest(`Invalid characters in attribute name`));
  if (keyValues) return { type: defaultType(raw), value: raw, metadata: {} };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new V2Error(badRequest(`attribute must be a JSON object, unless keyValues option is used`));
  const a = raw as Record<string, unknown>;
  const value = 'value' in a ? a.value : null;
  const type = a.type === undefined ? defaultType(value) : a.type;
  if (typeof type !== 'string' || !NAME.test(type))
    throw new V2Error(badRequest('invalid JSON type for attribute type'));
  const metadata = a.metadata === undefined ? {} : a.metadata;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
    throw new V2Error(badRequest('metadata must be a JSON object'));
  return { type, value, metadata };
}

function parseBody(req: BrokerRequest): unknown {
  if (req.body === '') throw new V2Error(badRequest('empty payload'));
  try {
    return JSON.parse(req.body);
  } catch {
    throw new V2Error(json(400, { error: 'ParseError', description: 'Errors found in incoming JSON buffer' }));
  }
}

function renderEntity(
  e: StoredEntity,
  opts: { attrs?: string[] | undefined; metadata?: string[] | undefined; keyValues: boolean; values: boolean },
): unknown {
  const names =
    opts.attrs && !opts.attrs.includes('*') ? opts.attrs.filter((n) => e.attrs.has(n)) : [...e.attrs.keys()];
  if (opts.values) return names.map((n) => e.attrs.get(n)?.value ?? null);
  const out: Record<string, unknown> = { id: e.id, type: e.type };
  for (const n of names) {
    const a = e.attrs.get(n) as Record<string, unknown>;
    if (opts.keyValues) out[n] = a.value;
    else if (opts.metadata && !opts.metadata.includes('*')) {
      const md: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(a.metadata as Record<string, unknown>))
        if (opts.metadata.includes(k)) md[k] = v;
      out[n] = { type: a.type, value: a.value, metadata: md };
    } else out[n] = a;
  }
  return out;
}

function fullJson(e: StoredEntity): string {
  if (e.json === undefined) {
    const out: Record<string, unknown> = { id: e.id, type: e.type };
    for (const [n, a] of e.attrs) out[n] = a;
    e.json = JSON.stringify(out);
  }
  return e.json;
}

export class NgsiV2 {
  private readonly store: EntityStore;
  private readonly subscriptions: Subscriptions;
  private readonly listCache = new Map<string, { version: number; tenant: Tenant; entities: StoredEntity[] }>();

  constructor(store: EntityStore, subscriptions: Subscriptions) {
    this.store = store;
    this.subscriptions = subscriptions;
    store.onChange((tenant, entity, kind) =>
      // The entity's JSON is rendered once (and kept with it); each subscription's body only wraps it.
      subscriptions.changed(
        tenant.name,
        entity,
        kind,
        (s) => `{"subscriptionId":${JSON.stringify(s.id)},"data":[${fullJson(entity)}]}`,
      ),
    );
  }

  handles(path: string): boolean {
    return path === '/version' || path.startsWith('/v2/');
  }

  handle(req: BrokerRequest): Reply {
    try {
      return this.route(req);
    } catch (err) {
      if (err instanceof V2Error) return err.reply;
      throw err;
    }
  }

  private route(req: BrokerRequest): Reply {
    const correlator = String(req.headers['fiware-correlator'] ?? randomUUID());
    const reply = this.dispatch(req);
    reply.headers = { ...reply.headers, 'Fiware-Correlator': correlator };
    return reply;
  }

  private dispatch(req: BrokerRequest): Reply {
    const { method, path } = req;
    if (path === '/version' && method === 'GET')
      return json(200, { orion: { version: '3.10.1', uptime: '0 d, 0 h, 0 m, 1 s', release_date: 'test-broker' } });
    if (path === '/v2/entities') {
      if (method === 'GET') return this.listEntities(req);
      if (method === 'POST') return this.createEntity(req);
    }
    if (path === '/v2/op/update' && method === 'POST') return this.batchUpdate(req);
    if (path === '/v2/subscriptions') {
      if (method === 'POST') return this.subscribe(req);
      if (method === 'GET') return this.listSubscriptions(req);
    }
    const sub = /^\/v2\/subscriptions\/([^/]+)$/.exec(path);
    if (sub) {
      const id = decodeURIComponent(sub[1] as string);
      if (method === 'GET') return this.getSubscription(req, id);
      if (method === 'PATCH') return this.patchSubscription(req, id);
      if (method === 'DELETE') return this.deleteSubscription(req, id);
    }
    const m = /^\/v2\/entities\/([^/]+)(?:\/attrs(?:\/([^/]+))?)?$/.exec(path);
    if (m) {
      const id = decodeURIComponent(m[1] as string);
      const attr = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
      const hasAttrs = path.includes('/attrs');
      if (!hasAttrs && method === 'GET') return this.getEntity(req, id);
      if (!hasAttrs && method === 'DELETE') return this.deleteEntity(req, id);
      if (hasAttrs && attr === undefined && (method === 'POST' || method === 'PATCH' || method === 'PUT'))
        return this.writeAttrs(req, id, method);
      if (attr !== undefined && method === 'PUT') return this.putAttr(req, id, attr);
      if (attr !== undefined && method === 'DELETE') return this.deleteAttr(req, id, attr);
    }
    return json(400, { error: 'BadRequest', description: 'service not found' });
  }

  private tenantFor(req: BrokerRequest, create: boolean): Tenant | undefined {
    return this.store.tenant(tenantName(req), create);
  }

  private listEntities(req: BrokerRequest): Reply {
    const limit = pageParam(req, 'limit') ?? DEFAULT_LIMIT;
    const offset = pageParam(req, 'offset') ?? 0;
    const options = optionSet(req, LIST_OPTIONS);
    const paths = queryPaths(req);
    const types = list(req.query.get('type'));
    const ids = list(req.query.get('id'));
    const idPatternRaw = req.query.get('idPattern');
    let idPattern: RegExp | undefined;
    if (idPatternRaw !== null) {
      try {
        idPattern = new RegExp(idPatternRaw);
      } catch {
        return badRequest('Invalid regular expression in idPattern');
      }
    }
    const q = req.query.get('q');
    const dateFilters = q === null || q === '' ? undefined : parseDateQ(q);
    const tenant = this.tenantFor(req, false);
    let matching = tenant ? this.filtered(tenant, req, paths, types, ids, idPattern) : [];
    if (dateFilters) matching = matching.filter((e) => dateFilters.every((f) => f(e)));
    const page = matching.slice(offset, offset + limit);
    const attrs = list(req.query.get('attrs'));
    const metadata = list(req.query.get('metadata'));
    const keyValues = options.has('keyValues');
    const values = options.has('values');
    let body: string;
    if (!attrs && !metadata && !keyValues && !values) body = `[${page.map(fullJson).join(',')}]`;
    else body = JSON.stringify(page.map((e) => renderEntity(e, { attrs, metadata, keyValues, values })));
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (options.has('count')) headers['Fiware-Total-Count'] = String(matching.length);
    return { status: 200, headers, body };
  }

  private filtered(
    tenant: Tenant,
    req: BrokerRequest,
    paths: ReturnType<typeof queryPaths>,
    types: string[] | undefined,
    ids: string[] | undefined,
    idPattern: RegExp | undefined,
  ): StoredEntity[] {
    if (!paths && !types && !ids && !idPattern) return tenant.list();
    // By ids: looked up, not scanned (kept in creation order).
    if (ids)
      return ids
        .flatMap((id) => tenant.withId(id))
        .sort((a, b) => a.seq - b.seq)
        .filter((e) => inPaths(e, paths) && (!types || types.includes(e.type)) && (!idPattern || idPattern.test(e.id)));
    const key = `${tenant.name}|${String(req.headers['fiware-servicepath'] ?? '')}|${types}|${idPattern}`;
    const cached = this.listCache.get(key);
    if (cached && cached.version === tenant.version && cached.tenant === tenant) return cached.entities;
    const entities = tenant
      .list()
      .filter((e) => inPaths(e, paths) && (!types || types.includes(e.type)) && (!idPattern || idPattern.test(e.id)));
    if (this.listCache.size > 64) this.listCache.clear();
    this.listCache.set(key, { version: tenant.version, tenant, entities });
    return entities;
  }

  private createEntity(req: BrokerRequest): Reply {
    const options = optionSet(req, new Set(['keyValues', 'upsert']));
    const body = parseBody(req);
    const servicePath = writePath(req);
    const tenant = this.tenantFor(req, true) as Tenant;
    const result = this.upsertOne(
      tenant,
      body,
      servicePath,
      options.has('keyValues'),
      options.has('upsert') ? 'append' : 'create',
    );
    if (result === 'exists') return json(422, { error: 'Unprocessable', description: 'Already Exists' });
    if (result === 'missing') return notFound();
    if (result.created)
      return empty(201, {
        Location: `/v2/entities/${encodeURIComponent(result.entity.id)}?type=${encodeURIComponent(result.entity.type)}`,
      });
    return empty(204);
  }

  /** Creates, or (mode append/update/replace) changes, one entity from a request body. */
  private upsertOne(
    tenant: Tenant,
    body: unknown,
    servicePath: string,
    keyValues: boolean,
    mode: 'create' | 'append' | 'appendStrict' | 'update' | 'replace',
  ): 'exists' | 'missing' | { entity: StoredEntity; created: boolean } {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new V2Error(badRequest('entity must be a JSON object'));
    const raw = body as Record<string, unknown>;
    if (typeof raw.id !== 'string' || !NAME.test(raw.id))
      throw new V2Error(badRequest('Invalid characters in entity id'));
    const type = raw.type === undefined ? 'Thing' : raw.type;
    if (typeof type !== 'string' || !NAME.test(type))
      throw new V2Error(badRequest('Invalid characters in entity type'));
    const attrs = new Map<string, Record<string, unknown>>();
    for (const [name, value] of Object.entries(raw)) {
      if (name === 'id' || name === 'type') continue;
      attrs.set(name, normalizeAttr(name, value, keyValues));
    }
    const existing = tenant.get(raw.id, type);
    if (!existing) {
      if (mode === 'update') return 'missing';
      const entity: StoredEntity = { id: raw.id, type, servicePath, attrs, seq: this.store.nextSeq(), json: undefined };
      tenant.create(entity);
      return { entity, created: true };
    }
    if (mode === 'create') return 'exists';
    if (mode === 'appendStrict') for (const n of attrs.keys()) if (existing.attrs.has(n)) return 'exists';
    if (mode === 'update') for (const n of attrs.keys()) if (!existing.attrs.has(n)) return 'missing';
    if (mode === 'replace') existing.attrs.clear();
    for (const [n, a] of attrs) existing.attrs.set(n, a);
    tenant.touch(existing);
    return { entity: existing, created: false };
  }

  private find(req: BrokerRequest, id: string): StoredEntity | Reply {
    const tenant = this.tenantFor(req, false);
    const type = req.query.get('type') ?? undefined;
    if (!tenant) return notFound();
    const matches = tenant.withId(id).filter((e) => type === undefined || e.type === type);
    if (matches.length === 0) return notFound();
    if (matches.length > 1)
      return json(409, {
        error: 'TooManyResults',
        description: 'More than one matching entity. Please refine your query',
      });
    return matches[0] as StoredEntity;
  }

  private getEntity(req: BrokerRequest, id: string): Reply {
    const found = this.find(req, id);
    if ('status' in found) return found;
    const options = optionSet(req, new Set(['keyValues', 'values', 'unique', 'skipForwarding', 'sysAttrs']));
    return json(
      200,
      renderEntity(found, {
        attrs: list(req.query.get('attrs')),
        metadata: list(req.query.get('metadata')),
        keyValues: options.has('keyValues'),
        values: options.has('values'),
      }),
    );
  }

  private deleteEntity(req: BrokerRequest, id: string): Reply {
    const found = this.find(req, id);
    if ('status' in found) return found;
    this.tenantFor(req, false)?.delete(found);
    return empty(204);
  }

  private writeAttrs(req: BrokerRequest, id: string, method: string): Reply {
    const found = this.find(req, id);
    if ('status' in found) return found;
    const options = optionSet(req, new Set(['keyValues', 'append']));
    const body = parseBody(req);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return badRequest('attributes must be a JSON object');
    const attrs = Object.entries(body as Record<string, unknown>).map(
      ([n, v]) => [n, normalizeAttr(n, v, options.has('keyValues'))] as const,
    );
    if (method === 'PATCH') {
      const missing = attrs.filter(([n]) => !found.attrs.has(n)).map(([n]) => n);
      if (missing.length > 0)
        return json(422, { error: 'Unprocessable', description: `do not exist: ${id} - [ ${missing.join(', ')} ]` });
    }
    if (method === 'PUT') found.attrs.clear();
    for (const [n, a] of attrs) found.attrs.set(n, a);
    this.tenantFor(req, false)?.touch(found);
    return empty(204);
  }

  private putAttr(req: BrokerRequest, id: string, attr: string): Reply {
    const found = this.find(req, id);
    if ('status' in found) return found;
    if (!found.attrs.has(attr))
      return json(404, { error: 'NotFound', description: 'The entity does not have such an attribute' });
    found.attrs.set(attr, normalizeAttr(attr, parseBody(req), false));
    this.tenantFor(req, false)?.touch(found);
    return empty(204);
  }

  private deleteAttr(req: BrokerRequest, id: string, attr: string): Reply {
    const found = this.find(req, id);
    if ('status' in found) return found;
    if (!found.attrs.delete(attr))
      return json(404, { error: 'NotFound', description: 'The entity does not have such an attribute' });
    this.tenantFor(req, false)?.touch(found);
    return empty(204);
  }

  private batchUpdate(req: BrokerRequest): Reply {
    const options = optionSet(req, new Set(['keyValues']));
    const body = parseBody(req) as { actionType?: unknown; entities?: unknown };
    const modes = ['append', 'appendStrict', 'update', 'delete', 'replace'] as const;
    const actionType = modes.find((m) => m === body?.actionType);
    if (!actionType)
      return badRequest('invalid update action type: right ones are: append, appendStrict, delete, replace, update');
    if (!Array.isArray(body.entities)) return badRequest('entities must be a JSON array');
    const servicePath = writePath(req);
    const tenant = this.tenantFor(req, true) as Tenant;
    for (const raw of body.entities) {
      if (actionType === 'delete') {
        const e = raw as { id?: unknown; type?: unknown };
        const found =
          typeof e?.id === 'string' ? tenant.get(e.id, typeof e.type === 'string' ? e.type : undefined) : undefined;
        if (!found) return notFound();
        const names = Object.keys(raw as object).filter((k) => k !== 'id' && k !== 'type');
        if (names.length === 0) tenant.delete(found);
        else {
          for (const n of names) found.attrs.delete(n);
          tenant.touch(found);
        }
        continue;
      }
      const result = this.upsertOne(tenant, raw, servicePath, options.has('keyValues'), actionType);
      if (result === 'exists') return json(422, { error: 'Unprocessable', description: 'Already Exists' });
      if (result === 'missing') return notFound();
    }
    return empty(204);
  }

  // ---- subscriptions ---------------------------------------------------------------------------------------

  private subscribe(req: BrokerRequest): Reply {
    const body = parseBody(req);
    const tenant = this.tenantFor(req, true) as Tenant;
    const id = randomBytes(12).toString('hex');
    this.subscriptions.add(this.buildSubscription(tenant.name, id, body, queryPaths(req)));
    return empty(201, { Location: `/v2/subscriptions/${id}` });
  }

  private buildSubscription(
    tenant: string,
    id: string,
    body: unknown,
    paths: ReturnType<typeof queryPaths>,
  ): StoredSubscription {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new V2Error(badRequest('subscription must be a JSON object'));
    const b = body as Record<string, unknown>;
    const subject = b.subject as { entities?: unknown; condition?: unknown } | undefined;
    if (!subject || !Array.isArray(subject.entities) || subject.entities.length === 0)
      throw new V2Error(badRequest('no subject entities specified'));
    const selectors = (subject.entities as Array<Record<string, unknown>>).map((sel) => {
      if (typeof sel !== 'object' || sel === null) throw new V2Error(badRequest('subject entity must be an object'));
      const pattern = (key: string) => {
        if (sel[key] === undefined) return undefined;
        try {
          return new RegExp(String(sel[key]));
        } catch {
          throw new V2Error(badRequest(`Invalid regex for ${key}`));
        }
      };
      if (sel.id === undefined && sel.idPattern === undefined)
        throw new V2Error(badRequest('subject entities: id or idPattern is required'));
      return {
        id: typeof sel.id === 'string' ? sel.id : undefined,
        idPattern: pattern('idPattern'),
        type: typeof sel.type === 'string' ? sel.type : undefined,
        typePattern: pattern('typePattern'),
      };
    });
    const condition = (subject.condition ?? {}) as { alterationTypes?: unknown };
    let alterations = new Set(['entityCreate', 'entityChange']);
    if (condition.alterationTypes !== undefined) {
      if (!Array.isArray(condition.alterationTypes) || !condition.alterationTypes.every((a) => ALTERATIONS.has(a)))
        throw new V2Error(badRequest('invalid alterationType'));
      alterations = new Set(condition.alterationTypes as string[]);
    }
    const notification = b.notification as Record<string, unknown> | undefined;
    const target = (notification?.httpCustom ?? notification?.http) as Record<string, unknown> | undefined;
    if (!target || typeof target.url !== 'string') throw new V2Error(badRequest('http notification is missing'));
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      throw new V2Error(badRequest('Invalid URL parsing notification url'));
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new V2Error(badRequest('Invalid URL parsing notification url'));
    const headers: Record<string, string> = { 'ngsiv2-attrsformat': 'normalized' };
    if (tenant) headers['fiware-service'] = tenant;
    const custom = notification?.httpCustom ? (target.headers as Record<string, unknown> | undefined) : undefined;
    for (const [k, v] of Object.entries(custom ?? {})) {
      if (typeof v !== 'string') throw new V2Error(badRequest('custom header values must be strings'));
      headers[k.toLowerCase()] = v;
    }
    let expiresAt: number | undefined;
    if (b.expires !== undefined) {
      expiresAt = parseTime(b.expires);
      if (expiresAt === undefined) throw new V2Error(badRequest('expires has an invalid format'));
    }
    const kindMatches = (kind: ChangeKind) =>
      kind === 'create'
        ? alterations.has('entityCreate')
        : kind === 'delete'
          ? alterations.has('entityDelete')
          : alterations.has('entityChange') || alterations.has('entityUpdate');
    const view: Record<string, unknown> = { id };
    for (const k of ['description', 'subject', 'notification', 'expires', 'throttling'])
      if (b[k] !== undefined) view[k] = b[k];
    return {
      id,
      tenant,
      servicePaths: paths,
      url: url.toString(),
      headers,
      expiresAt,
      view,
      timesSent: 0,
      timesFailed: 0,
      matches: (e, kind) =>
        kindMatches(kind) &&
        inPaths(e, paths) &&
        selectors.some(
          (sel) =>
            (sel.id === undefined || sel.id === e.id) &&
            (!sel.idPattern || sel.idPattern.test(e.id)) &&
            (sel.type === undefined || sel.type === e.type) &&
            (!sel.typePattern || sel.typePattern.test(e.type)),
        ),
    };
  }

  private subscriptionView(s: StoredSubscription): Record<string, unknown> {
    const expired = s.expiresAt !== undefined && s.expiresAt <= Date.now();
    const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
    const notification = {
      ...(s.view.notification as Record<string, unknown>),
      timesSent: s.timesSent,
      ...(s.lastNotification ? { lastNotification: iso(s.lastNotification) } : {}),
      ...(s.lastSuccess ? { lastSuccess: iso(s.lastSuccess) } : {}),
      ...(s.lastFailure ? { lastFailure: iso(s.lastFailure) } : {}),
    };
    return {
      ...s.view,
      status: expired ? 'expired' : s.lastFailure && (s.lastSuccess ?? 0) < s.lastFailure ? 'failed' : 'active',
      notification,
    };
  }

  private subscription(req: BrokerRequest, id: string): StoredSubscription {
    const s = this.subscriptions.get(tenantName(req), id);
    if (!s)
      throw new V2Error(
        json(404, { error: 'NotFound', description: 'The requested subscription has not been found. Check id' }),
      );
    return s;
  }

  private listSubscriptions(req: BrokerRequest): Reply {
    const limit = pageParam(req, 'limit') ?? DEFAULT_LIMIT;
    const offset = pageParam(req, 'offset') ?? 0;
    const options = optionSet(req, new Set(['count']));
    const all = this.subscriptions.list(tenantName(req));
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (options.has('count')) headers['Fiware-Total-Count'] = String(all.length);
    return json(
      200,
      all.slice(offset, offset + limit).map((s) => this.subscriptionView(s)),
      headers,
    );
  }

  private getSubscription(req: BrokerRequest, id: string): Reply {
    return json(200, this.subscriptionView(this.subscription(req, id)));
  }

  private patchSubscription(req: BrokerRequest, id: string): Reply {
    const s = this.subscription(req, id);
    const body = parseBody(req);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return badRequest('subscription must be a JSON object');
    const next = this.buildSubscription(s.tenant, id, { ...s.view, ...(body as object) }, s.servicePaths);
    next.timesSent = s.timesSent;
    next.timesFailed = s.timesFailed;
    this.subscriptions.add(next);
    return empty(204);
  }

  private deleteSubscription(req: BrokerRequest, id: string): Reply {
    this.subscription(req, id);
    this.subscriptions.delete(tenantName(req), id);
    return empty(204);
  }
}
