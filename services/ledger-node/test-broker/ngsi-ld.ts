// The NGSI-LD subset (ETSI GS CIM 009, as Orion-LD serves it): `GET /ngsi-ld/v1/entities` with
// limit (default 20, at most 1000; 0 only with count) and offset, `count=true` →
// `NGSILD-Results-Count`, `type`, `id`, `idPattern`, `attrs`, `local=true`; a query naming none of
// these is "too broad" (400). The `@context` travels in a `Link` header (Accept: application/json)
// or in each entity (Accept: application/ld+json). Tenants are `NGSILD-Tenant`; reading an unknown
// tenant is 404 NonexistentTenant. Writes: create, append/update attributes, delete, batch upsert.
// Terms are kept as written: the test broker does not expand or compact JSON-LD.
import { type BrokerRequest, empty, json, type Reply } from './http.ts';
import type { EntityStore, StoredEntity, Tenant } from './store.ts';

export const CORE_CONTEXT = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context.jsonld';
const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 20;
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

const problem = (status: number, kind: string, title: string, detail?: string): Reply =>
  json(status, { type: `https://uri.etsi.org/ngsi-ld/errors/${kind}`, title, ...(detail ? { detail } : {}) });

class LdError extends Error {
  readonly reply: Reply;
  constructor(reply: Reply) {
    super('ngsi-ld error');
    this.reply = reply;
  }
}
const bad = (title: string, detail?: string) => new LdError(problem(400, 'BadRequestData', title, detail));

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
  if (typeof raw !== 'object' || raw === null)
    throw bad('Invalid attribute', `attribute ${name} must be an object or an array of instances`);
  const instances = Array.isArray(raw) ? raw : [raw];
  for (const inst of instances) {
    const t = (inst as { type?: unknown })?.type;
    if (typeof t !== 'string' || !ATTR_TYPES.has(t)) throw bad('Invalid attribute', `attribute ${name}: unknown type`);
    if (t === 'Relationship' && !('object' in inst))
      throw bad('Invalid attribute', `relationship ${name} needs object`);
  }
  return raw as Record<string, unknown>;
}

function pageParam(req: BrokerRequest, name: 'limit' | 'offset'): number | undefined {
  const raw = req.query.get(name);
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw)) throw bad(`Invalid value for URI parameter '${name}'`, raw);
  const n = Number(raw);
  if (name === 'limit' && n > MAX_LIMIT) throw bad(`Invalid value for URI parameter 'limit'`, `max: ${MAX_LIMIT}`);
  return n;
}

export class NgsiLd {
  private readonly store: EntityStore;

  constructor(store: EntityStore) {
    this.store = store;
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
    const { method, path } = req;
    if (path === '/ngsi-ld/v1/entities') {
      if (method === 'GET') return this.query(req);
      if (method === 'POST') return this.create(req);
    }
    if (path === '/ngsi-ld/v1/entityOperations/upsert' && method === 'POST') return this.upsert(req);
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
    return problem(404, 'ResourceNotFound', 'Service not found', `${method} ${path}`);
  }

  private tenant(req: BrokerRequest, create: boolean): Tenant | undefined {
    const raw = req.headers['ngsild-tenant'];
    const name = raw === undefined ? '' : String(raw);
    if (name !== '' && !/^[A-Za-z0-9_-]{1,50}$/.test(name)) throw bad('Invalid tenant name', name);
    const t = this.store.tenant(name, create || name === '');
    if (!t) throw new LdError(problem(404, 'NonexistentTenant', 'No such tenant', name));
    return t;
  }

  private render(e: StoredEntity, context: string, ldJson: boolean, attrs: string[] | undefined): string {
    if (!attrs && !ldJson) {
      if (e.json === undefined) {
        const out: Record<string, unknown> = { id: e.id, type: e.type };
        for (const [n, a] of e.attrs) out[n] = a;
        e.json = JSON.stringify(out);
      }
      return e.json;
    }
    const out: Record<string, unknown> = { id: e.id, type: e.type };
    for (const [n, a] of e.attrs) if (!attrs || attrs.includes(n)) out[n] = a;
    if (ldJson) out['@context'] = context;
    return JSON.stringify(out);
  }

  private accepts(req: BrokerRequest): boolean {
    const accept = String(req.headers.accept ?? '');
    return accept.includes('application/ld+json') && !/^application\/json/.test(accept);
  }

  private query(req: BrokerRequest): Reply {
    const limit = pageParam(req, 'limit') ?? DEFAULT_LIMIT;
    const offset = pageParam(req, 'offset') ?? 0;
    const count = req.query.get('count') === 'true';
    if (limit === 0 && !count) throw bad(`Invalid value for URI parameter 'limit'`, 'zero needs count=true');
    const types = req.query.get('type')?.split(',').filter(Boolean);
    const ids = req.query.get('id')?.split(',').filter(Boolean);
    const attrs = req.query.get('attrs')?.split(',').filter(Boolean);
    const idPatternRaw = req.query.get('idPattern');
    const local = req.query.get('local') === 'true';
    if (!types && !ids && !attrs && idPatternRaw === null && req.query.get('q') === null && !local)
      throw bad(
        'Too broad query',
        'Need at least one of: entity-id, entity-type, geo-location, attribute-list, Q-filter, local=true',
      );
    let idPattern: RegExp | undefined;
    if (idPatternRaw !== null) {
      try {
        idPattern = new RegExp(idPatternRaw);
      } catch {
        throw bad('Invalid idPattern', idPatternRaw);
      }
    }
    const tenant = this.tenant(req, false) as Tenant;
    const all = tenant.list();
    const matching =
      !types && !ids && !attrs && !idPattern
        ? all
        : all.filter(
            (e) =>
              (!types || types.includes(e.type)) &&
              (!ids || ids.includes(e.id)) &&
              (!idPattern || idPattern.test(e.id)) &&
              (!attrs || attrs.some((a) => e.attrs.has(a))),
          );
    const context = linkContext(req.headers.link);
    const ldJson = this.accepts(req);
    const page = matching.slice(offset, offset + limit);
    const headers: Record<string, string> = ldJson
      ? { 'Content-Type': 'application/ld+json' }
      : { 'Content-Type': 'application/json', Link: linkHeader(context) };
    if (count) headers['NGSILD-Results-Count'] = String(matching.length);
    return { status: 200, headers, body: `[${page.map((e) => this.render(e, context, ldJson, attrs)).join(',')}]` };
  }

  private parse(req: BrokerRequest): Record<string, unknown> | unknown[] {
    const type = String(req.headers['content-type'] ?? '');
    if (!type.startsWith('application/json') && !type.startsWith('application/ld+json'))
      throw new LdError(problem(415, 'UnsupportedMediaType', 'Unsupported Media Type', type));
    try {
      const v = JSON.parse(req.body);
      if (typeof v !== 'object' || v === null) throw new Error('not an object');
      return v as Record<string, unknown>;
    } catch {
      throw new LdError(problem(400, 'InvalidRequest', 'JSON Parse Error'));
    }
  }

  private build(raw: unknown): { id: string; type: string; attrs: Map<string, Record<string, unknown>> } {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('Entity must be an object');
    const e = raw as Record<string, unknown>;
    if (!isUri(e.id)) throw bad('Invalid Entity ID', 'Not a URI');
    if (typeof e.type !== 'string' || e.type === '') throw bad('Entity type missing');
    const attrs = new Map<string, Record<string, unknown>>();
    for (const [n, v] of Object.entries(e)) if (!RESERVED.has(n)) attrs.set(n, checkAttr(n, v));
    return { id: e.id, type: e.type, attrs };
  }

  private create(req: BrokerRequest): Reply {
    const built = this.build(this.parse(req));
    const tenant = this.tenant(req, true) as Tenant;
    if (tenant.get(built.id, undefined)) return problem(409, 'AlreadyExists', 'Entity already exists', built.id);
    tenant.create({ ...built, servicePath: '/', seq: this.store.nextSeq(), json: undefined });
    return empty(201, { Location: `/ngsi-ld/v1/entities/${encodeURIComponent(built.id)}` });
  }

  private upsert(req: BrokerRequest): Reply {
    const body = this.parse(req);
    if (!Array.isArray(body)) throw bad('Batch upsert needs an array of entities');
    const mode = req.query.get('options') === 'update' ? 'update' : 'replace';
    const tenant = this.tenant(req, true) as Tenant;
    const created: string[] = [];
    for (const raw of body) {
      const built = this.build(raw);
      const existing = tenant.get(built.id, undefined);
      if (!existing) {
        tenant.create({ ...built, servicePath: '/', seq: this.store.nextSeq(), json: undefined });
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
    const tenant = this.tenant(req, false) as Tenant;
    const entity = tenant.get(id, undefined);
    if (!entity) throw new LdError(problem(404, 'ResourceNotFound', 'Entity Not Found', id));
    return { tenant, entity };
  }

  private getOne(req: BrokerRequest, id: string): Reply {
    const { entity } = this.find(req, id);
    const context = linkContext(req.headers.link);
    const ldJson = this.accepts(req);
    return {
      status: 200,
      headers: ldJson
        ? { 'Content-Type': 'application/ld+json' }
        : { 'Content-Type': 'application/json', Link: linkHeader(context) },
      body: this.render(entity, context, ldJson, req.query.get('attrs')?.split(',').filter(Boolean)),
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
    if (method === 'PATCH') {
      const missing = attrs.filter(([n]) => !entity.attrs.has(n)).map(([n]) => n);
      if (missing.length > 0) return json(207, { updated: [], notUpdated: missing.map((n) => ({ attributeName: n })) });
    }
    for (const [n, v] of attrs) entity.attrs.set(n, checkAttr(n, v));
    tenant.touch(entity);
    return empty(204);
  }

  private deleteAttr(req: BrokerRequest, id: string, attr: string): Reply {
    const { tenant, entity } = this.find(req, id);
    if (!entity.attrs.delete(attr)) return problem(404, 'ResourceNotFound', 'Attribute Not Found', attr);
    tenant.touch(entity);
    return empty(204);
  }
}
