// Load generator for the ledger benchmark, run as its own process: submits records by POST /mempool
// round-robin over the nodes and watches one node's chain to time submit-to-finality per record
// (the loop: load-driver.ts). Input: one JSON argument. Output: one JSON line on stdout.
import { Agent, request } from 'undici';
import { type LoadOptions, runLoadLoop } from './load-driver.ts';

const opts = JSON.parse(process.argv[2] ?? '{}') as LoadOptions & { token: string };
const agent = new Agent({ connections: 32, keepAliveTimeout: 30_000 });
const headers = { authorization: `Bearer ${opts.token}`, 'content-type': 'application/json' };
const base = opts.urls[0] as string;

async function getJson(url: string): Promise<unknown> {
  const res = await request(url, { dispatcher: agent, headersTimeout: 30_000, bodyTimeout: 30_000 });
  return res.body.json();
}

const result = await runLoadLoop(opts, {
  async submit(target, ids, first) {
    const records = ids.map((id, i) => {
      const seq = first + i + 1;
      return {
        id,
        entity: `urn:ngsi-ld:Sensor:${seq % 1000}`,
        attribute: 'temperature',
        value: seq % 97,
        verdict: 'OK',
      };
    });
    const res = await request(`${target}/mempool`, {
      method: 'POST',
      dispatcher: agent,
      headers,
      body: JSON.stringify({ records }),
    });
    const body = (await res.body.json()) as { accepted?: number };
    return res.statusCode === 200 ? { accepted: body.accepted ?? 0, rejected: [] } : { accepted: 0, rejected: ids };
  },
  tip: async () => ((await getJson(`${base}/chain`)) as { height: number }).height,
  idsAt: async (h) =>
    ((await getJson(`${base}/blocks/${h}`)) as { records: Array<{ id: string }> }).records.map((r) => r.id),
});
process.stdout.write(`${JSON.stringify(result)}\n`);
await agent.close();
