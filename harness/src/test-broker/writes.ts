// Writes to a broker over its own HTTP API, as an application with write access (or someone tampering) would: the
// same requests for the test broker and for Scorpio (NGSI-LD) or Orion (NGSI-v2). The data is generate.ts's.
import { attribute, attributeName, ENTITY_TYPE, entityId, tenantHeaders } from './generate.ts';

export type Api = 'ngsi-v2' | 'ngsi-ld';

async function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: unknown,
  ok: (status: number) => boolean,
): Promise<void> {
  const init = {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
  for (let attempt = 0; ; attempt++) {
    // A kept-alive connection a restarted broker closed fails before the request is sent: once more on a new one.
    const res = await fetch(url, init).catch(() => fetch(url, init));
    const text = await res.text();
    if (ok(res.status)) return;
    // Scorpio makes a tenant's database on the tenant's first request and its functions a moment later: a write in
    // between is answered 500 with PostgreSQL's "function … does not exist" (42883) and changes nothing. Again,
    // for up to 30 s, as a client of that broker would.
    if (res.status === 500 && text.includes('(42883)') && attempt < 60) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  }
}

const ok2xx = (s: number) => s >= 200 && s < 300;

/** A broker's write API in one tenant. */
export class BrokerWrites {
  readonly url: string;
  readonly api: Api;
  private readonly headers: Record<string, string>;

  constructor(url: string, api: Api, tenant?: string) {
    this.url = url;
    this.api = api;
    this.headers = tenantHeaders(api, tenant);
  }

  /** Entities `from`…`from+count-1` of `attrs` attributes (generate.ts's values), 1000 a request. */
  async seed(count: number, attrs: number, from = 0): Promise<void> {
    for (let start = from; start < from + count; start += 1000) {
      const entities: Array<Record<string, unknown>> = [];
      for (let i = start; i < Math.min(start + 1000, from + count); i++) {
        const e: Record<string, unknown> = { id: entityId(i), type: ENTITY_TYPE };
        for (let j = 0; j < attrs; j++) e[attributeName(j)] = attribute(this.api, i, j);
        entities.push(e);
      }
      await this.upsert(entities);
    }
  }

  private async upsert(entities: Array<Record<string, unknown>>, update = false): Promise<void> {
    if (this.api === 'ngsi-v2')
      await send(
        `${this.url}/v2/op/update`,
        'POST',
        this.headers,
        { actionType: update ? 'update' : 'append', entities },
        ok2xx,
      );
    else
      await send(
        `${this.url}/ngsi-ld/v1/entityOperations/upsert${update ? '?options=update' : ''}`,
        'POST',
        this.headers,
        entities,
        ok2xx,
      );
  }

  /** Sets attribute `j` of entity `i` to `value` (generate.ts's attribute shape). */
  async set(i: number, j: number, value?: unknown): Promise<void> {
    const attr = attribute(this.api, i, j, value);
    const path =
      this.api === 'ngsi-v2'
        ? `/v2/entities/${encodeURIComponent(entityId(i))}/attrs?type=${ENTITY_TYPE}`
        : `/ngsi-ld/v1/entities/${encodeURIComponent(entityId(i))}/attrs`;
    await send(`${this.url}${path}`, 'POST', this.headers, { [attributeName(j)]: attr }, ok2xx);
  }

  /** Sets many attributes at once (one batch request per 1000 entities): `value` of attribute `j` of each. */
  async setMany(changes: Array<{ i: number; j: number; value: unknown }>): Promise<void> {
    for (let s = 0; s < changes.length; s += 1000)
      await this.upsert(
        changes.slice(s, s + 1000).map(({ i, j, value }) => ({
          id: entityId(i),
          type: ENTITY_TYPE,
          [attributeName(j)]: attribute(this.api, i, j, value),
        })),
        true,
      );
  }

  async deleteAttribute(i: number, j: number): Promise<void> {
    const path =
      this.api === 'ngsi-v2'
        ? `/v2/entities/${encodeURIComponent(entityId(i))}/attrs/${attributeName(j)}?type=${ENTITY_TYPE}`
        : `/ngsi-ld/v1/entities/${encodeURIComponent(entityId(i))}/attrs/${attributeName(j)}`;
    await send(`${this.url}${path}`, 'DELETE', this.headers, undefined, ok2xx);
  }
}
