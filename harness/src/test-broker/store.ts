// The test broker's entity store: tenants, service paths and entities in creation order, as Orion
// keeps them (a listing without orderBy returns entities by increasing creation time). One store
// speaks one API flavour; attribute objects are stored exactly as that API represents them.
// Each entity's serialized form is cached until it changes, so paging 100k entities stays cheap.
// Every create, change and delete is announced to the store's listeners (the subscriptions), and
// stamps the entity's modification time (Orion's dateModified, NGSI-LD's modifiedAt).

export type BrokerApi = 'ngsi-v2' | 'ngsi-ld';

export interface StoredEntity {
  id: string;
  /** The entity type (NGSI-v2), or its first type (NGSI-LD, where an entity may have several: `types`). */
  type: string;
  /** NGSI-LD: every type, as written (one or more). */
  types?: string[];
  servicePath: string;
  /** Attribute name → attribute object in the API's normalized representation. */
  attrs: Map<string, Record<string, unknown>>;
  /** Creation sequence: the listing order. */
  seq: number;
  /** Cached JSON of the full normalized entity (no filters), reset on every change. */
  json: string | undefined;
  /** Creation and last modification, ms since the epoch (set by the tenant). */
  createdAt?: number;
  modifiedAt?: number;
}

export type ChangeKind = 'create' | 'update' | 'delete';

/** Called after every change of an entity (a delete passes the entity as it was). */
export type ChangeListener = (tenant: Tenant, entity: StoredEntity, kind: ChangeKind) => void;

export const entityKey = (id: string, type: string): string => `${id}\u0000${type}`;

/** One tenant (Fiware-Service / NGSILD-Tenant): its entities in creation order. */
export class Tenant {
  readonly name: string;
  private readonly byKey = new Map<string, StoredEntity>();
  /** Entities by id (an id may have several types in NGSI-v2), in creation order: lookups by id cost no scan. */
  private readonly byId = new Map<string, StoredEntity[]>();
  private ordered: StoredEntity[] | undefined = [];
  private readonly changed: (tenant: Tenant, entity: StoredEntity, kind: ChangeKind) => void;
  /** Bumped on every create or delete, so cached filtered listings know they are stale. */
  version = 0;

  constructor(name: string, changed: (tenant: Tenant, entity: StoredEntity, kind: ChangeKind) => void = () => {}) {
    this.name = name;
    this.changed = changed;
  }

  get size(): number {
    return this.byKey.size;
  }

  get(id: string, type: string | undefined): StoredEntity | undefined {
    if (type !== undefined) return this.byKey.get(entityKey(id, type));
    return this.byId.get(id)?.[0];
  }

  /** The entities with this id (every type), in creation order. */
  withId(id: string): readonly StoredEntity[] {
    return this.byId.get(id) ?? [];
  }

  /** Entities in creation order. */
  list(): StoredEntity[] {
    if (!this.ordered) this.ordered = [...this.byKey.values()];
    return this.ordered;
  }

  create(entity: StoredEntity): void {
    this.byKey.set(entityKey(entity.id, entity.type), entity);
    this.byId.set(entity.id, [...(this.byId.get(entity.id) ?? []), entity]);
    this.ordered?.push(entity);
    this.version++;
    entity.createdAt = entity.modifiedAt = Date.now();
    this.changed(this, entity, 'create');
  }

  delete(entity: StoredEntity): boolean {
    const deleted = this.byKey.delete(entityKey(entity.id, entity.type));
    if (deleted) {
      const rest = (this.byId.get(entity.id) ?? []).filter((e) => e !== entity);
      if (rest.length > 0) this.byId.set(entity.id, rest);
      else this.byId.delete(entity.id);
      this.ordered = undefined;
      this.version++;
      this.changed(this, entity, 'delete');
    }
    return deleted;
  }

  /** Marks an entity changed (its cached JSON is rebuilt on the next read). */
  touch(entity: StoredEntity): void {
    entity.json = undefined;
    entity.modifiedAt = Date.now();
    this.changed(this, entity, 'update');
  }
}

/** All tenants of one broker. The default tenant (no tenant header) is ''. */
export class EntityStore {
  readonly api: BrokerApi;
  private readonly tenants = new Map<string, Tenant>();
  private readonly listeners: ChangeListener[] = [];
  private seq = 0;

  constructor(api: BrokerApi) {
    this.api = api;
  }

  tenant(name: string, create: boolean): Tenant | undefined {
    let t = this.tenants.get(name);
    if (!t && create) {
      t = new Tenant(name, (tenant, entity, kind) => {
        for (const l of this.listeners) l(tenant, entity, kind);
      });
      this.tenants.set(name, t);
    }
    return t;
  }

  /** Calls `listener` after every change of every tenant's entities. */
  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
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
