// Minimal types for the parts of ngsijs the test broker's fidelity test uses (the package ships none).
declare module 'ngsijs' {
  interface V2Scope {
    service?: string;
    servicepath?: string;
  }
  interface ListResult<T> {
    results: T[];
    count?: number | null;
    limit: number;
    offset: number;
    correlator?: string;
    format?: string;
  }
  type Entity = Record<string, unknown> & { id: string; type?: string };
  class V2 {
    listEntities(
      options?: V2Scope & {
        limit?: number;
        offset?: number;
        count?: boolean;
        keyValues?: boolean;
        attrs?: string;
        type?: string;
        idPattern?: string;
      },
    ): Promise<ListResult<Entity>>;
    createEntity(
      entity: Entity,
      options?: V2Scope & { keyValues?: boolean; upsert?: boolean },
    ): Promise<{ location: string }>;
    getEntity(options: V2Scope & { id: string; type?: string; keyValues?: boolean }): Promise<{ entity: Entity }>;
    updateEntityAttributes(changes: Entity, options?: V2Scope & { keyValues?: boolean }): Promise<unknown>;
    batchUpdate(
      changes: { actionType: string; entities: Entity[] },
      options?: V2Scope & { keyValues?: boolean },
    ): Promise<unknown>;
  }
  class LD {
    queryEntities(options?: {
      limit?: number;
      offset?: number;
      count?: boolean;
      type?: string;
      tenant?: string;
      '@context'?: string;
    }): Promise<ListResult<Entity>>;
    createEntity(entity: Entity, options?: { tenant?: string }): Promise<{ location: string }>;
    getEntity(options: { id: string; tenant?: string }): Promise<{ entity: Entity; format: string }>;
  }
  class Connection {
    constructor(url: string, options?: Record<string, unknown>);
    v2: V2;
    ld: LD;
  }
  class ConnectionError extends Error {}
  class InvalidResponseError extends Error {}
  class AlreadyExistsError extends Error {}
  class NotFoundError extends Error {}
  class BadRequestError extends Error {}
  const NGSI: {
    Connection: typeof Connection;
    ConnectionError: typeof ConnectionError;
    InvalidResponseError: typeof InvalidResponseError;
    AlreadyExistsError: typeof AlreadyExistsError;
    NotFoundError: typeof NotFoundError;
    BadRequestError: typeof BadRequestError;
  };
  export default NGSI;
}
