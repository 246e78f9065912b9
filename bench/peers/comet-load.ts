// Load generator for CometBFT, run as its own process like bench/ledger/load.ts and with the same loop
// (bench/ledger/load-driver.ts): each batch is one JSON-RPC batch of broadcast_tx_sync calls (a kvstore tx
// `id=value` each; accepted = CheckTx code 0), round-robin over the nodes; finality is observed as for our ledger,
// polling node 0's /status for the last committed height and reading each new block's txs from /block.
// Input: one JSON argument (LoadOptions). Output: one JSON line on stdout.
import { Agent, request } from 'undici';
import { type LoadOptions, runLoadLoop } from '../ledger/load-driver.ts';

const opts = JSON.parse(process.argv[2] ?? '{}') as LoadOptions;
const agent = new Agent({ connections: 32, keepAliveTimeout: 30_000 });
const base = opts.urls[0] as string;

async function getJson(url: string): Promise<{ result?: unknown; error?: unknown }> {
  const res = await request(url, { dispatcher: agent, headersTimeout: 30_000, bodyTimeout: 30_000 });
  return (await res.body.json()) as { result?: unknown; error?: unknown };
}

const result = await runLoadLoop(opts, {
  async submit(target, ids, first) {
    const calls = ids.map((id, i) => ({
      jsonrpc: '2.0',
      id: i,
      method: 'broadcast_tx_sync',
      params: { tx: Buffer.from(`${id}=${(first + i + 1) % 97}`).toString('base64') },
    }));
    const res = await request(target, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(calls),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const replies = (await res.body.json()) as Array<{ id: number; result?: { code: number }; error?: unknown }>;
    if (!Array.isArray(replies)) return { accepted: 0, rejected: ids };
    const ok = new Set(replies.filter((r) => r.result && r.result.code === 0).map((r) => r.id));
    return { accepted: ok.size, rejected: ids.filter((_, i) => !ok.has(i)) };
  },
  async tip() {
    const body = await getJson(`${base}/status`);
    return Number((body.result as { sync_info: { latest_block_height: string } }).sync_info.latest_block_height);
  },
  async idsAt(h) {
    const body = await getJson(`${base}/block?height=${h}`);
    const txs = (body.result as { block: { data: { txs: string[] | null } } }).block.data.txs ?? [];
    return txs.map((tx) => {
      const text = Buffer.from(tx, 'base64').toString();
      return text.slice(0, text.indexOf('='));
    });
  },
});
process.stdout.write(`${JSON.stringify(result)}\n`);
await agent.close();
