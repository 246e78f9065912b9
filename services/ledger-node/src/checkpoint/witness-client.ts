// The client side of C2SP tlog-witness: one `add-checkpoint` POST to a witness (ours, litewitness or any other),
// over its own keep-alive pool. No cluster token or client certificate: a witness authenticates the checkpoint by
// its signatures, not the caller.
import {
  ADD_CHECKPOINT_PATH,
  type AddCheckpoint,
  formatAddCheckpoint,
  parseCosignatureLines,
  parseSizeResponse,
  SIZE_CONTENT_TYPE,
} from '@scriptorium/ledger-protocol';
import { Agent, request } from 'undici';

export type WitnessAnswer =
  /** 200: the witness's cosignature lines. */
  | { kind: 'cosigned'; lines: string[] }
  /** 409 with the size of the checkpoint it cosigned last. */
  | { kind: 'size'; size: number }
  /** Any other refusal: 400, 403, 404, 409 without a size (same size, another root), 422 (not consistent). */
  | { kind: 'refused'; status: number; message: string }
  | { kind: 'unreachable'; message: string };

const MAX_ANSWER_BYTES = 16 * 1024;

export class WitnessClient {
  private readonly agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });
  private readonly timeoutMs: number;

  constructor(timeoutMs = 5000) {
    this.timeoutMs = timeoutMs;
  }

  /** POST <url>/add-checkpoint; never throws. */
  async addCheckpoint(url: string, body: AddCheckpoint): Promise<WitnessAnswer> {
    try {
      const res = await request(`${url.replace(/\/+$/, '')}${ADD_CHECKPOINT_PATH}`, {
        method: 'POST',
        dispatcher: this.agent,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: formatAddCheckpoint(body),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      const text = await readText(res.body);
      if (res.statusCode === 200) {
        const lines = parseCosignatureLines(text);
        return typeof lines === 'string'
          ? { kind: 'refused', status: 200, message: `unreadable answer: ${lines}` }
          : { kind: 'cosigned', lines };
      }
      const type = String(res.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim();
      if (res.statusCode === 409 && type === SIZE_CONTENT_TYPE) {
        const size = parseSizeResponse(text);
        if (size !== null) return { kind: 'size', size };
      }
      return { kind: 'refused', status: res.statusCode, message: text.trim().slice(0, 300) };
    } catch (err) {
      return { kind: 'unreachable', message: (err as Error).message.slice(0, 300) };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

async function readText(body: AsyncIterable<Buffer | Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) throw new Error(`answer over ${MAX_ANSWER_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
