// The test broker's entity store: tenants, service paths and entities in creation order, as Orion
// keeps them (a listing without orderBy returns entities by increasing creation time). One store
// speaks one API flavour; attribute objects are stored exactly as that API represents them.
// Each entity's serialized form is cached until it changes, so paging 100k entities stays cheap.

export type BrokerApi = 'ngsi-v2' | 'ngsi-ld';

export interface StoredEntity {
  id: string;
  type: string;
  servicePath: string;
  /** Attribute name → attribute object in the API's normalized representation. */
  attrs: Map<string, Record<string, unknown>>;
  /** Creation sequence: the listing order. */
  seq: number;
  /** Cached JSON of the full normalized entity (no filters), reset on every change. */
  json: string | undefined;
}

export const entityKey = (id: string, type: string): string => `${id}\u0000${type}`;

/** One tenant (Fiware-Service / NGSILD-Tenant): its entities in creation order. */
export class Tenant {
  readonly name: string;
  private readonly byKey = new Map<string, StoredEntity>();
  private ordered: StoredEntity[] | undefined = [];
  /** Bumped on every create or delete, so cached filtered listings know they are stale. */
  version = 0;

  constructor(name: string) {
    this.name = name;
  }

  get size(): number {
    return this.byKey.size;
  }

  get(id: string, type: string | undefined): StoredEntity | undefined {
    if (type !== undefined) return this.byKey.get(entityKey(id, type));
    for (const e of this.list()) if (e.id === id) return e;
    return undefined;
  }

  /** Entities in creation order. */
  list(): StoredEntity[] {
    if (!this.ordered) this.ordered = [...this.byKey.values()];
    return this.ordered;
  }

  create(entity: StoredEntity): void {
    this.byKey.set(entityKey(entity.id, entity.type), entity);
    this.ordered?.push(entity);
    this.version++;
  }

  delete(entity: StoredEntity): boolean {
    const deleted = this.byKey.delete(entityKey(entity.id, entity.type));
    if (deleted) {
      this.ordered = undefined;
      this.version++;
    }
    return deleted;
  }

  /** Marks an entity changed (its cached JSON is rebuilt on the next read). */
  touch(entity: StoredEntity): void {
    entity.json = undefined;
  }
}

/** All tenants of one broker. The default tenant (no tenant header) is ''. */
export class EntityStore {
  readonly api: BrokerApi;
  private readonly tenants = new Map<string, Tenant>();
  private seq = 0;

  constructor(api: BrokerApi) {
    this.api = api;
  }

  tenant(name: string, create: boolean): Tenant | undefined {
    let t = this.tenants.get(name);
    if (!t && create) {
      t = new Tenant(name);
      this.tenants.set(name, t);
    }
    return t;
  }

  nextSeq(): number {
    return this.seq++;
  }

  /** Total entities over every tenant. */
  get size(): number {
    let n = 0;
    for (const t of this.tenants.values()) n += t.size;
    return n;
  }
}
