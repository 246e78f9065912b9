// The tamper feed: the TAMPERED records of the latest blocks, newest first, each with its entity, attribute,
// broker and observed value, and links to its block and to its proof's verification. Follows the tip.
import type { IntegrityRecord } from '@scriptorium/ledger-protocol';
import { useRef, useState } from 'preact/hooks';
import { blockAt, home } from './api.ts';
import { ago, num, short } from './format.ts';
import { usePoll } from './load.tsx';

/** Blocks scanned per step (from the tip down). */
const SCAN = 100;
const REFRESH_MS = 5000;

interface Found {
  height: number;
  index: number;
  timestamp: number;
  record: IntegrityRecord;
}

const text = (v: unknown) => (v === undefined || v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

async function scan(from: number, to: number): Promise<Found[]> {
  const out: Found[] = [];
  for (let h = from; h >= Math.max(1, to); h--) {
    const block = await blockAt(h);
    block.records.forEach((record, index) => {
      if (record.verdict === 'TAMPERED') out.push({ height: h, index, timestamp: block.header.timestamp, record });
    });
  }
  return out;
}

export function TamperFeed() {
  const [found, setFound] = useState<Found[]>([]);
  const [scanned, setScanned] = useState<{ top: number; bottom: number } | null>(null);
  const [error, setError] = useState<string | null>(null);

  const top = useRef(-1);
  usePoll(
    async (live) => {
      const tip = (await home.chain()).height;
      if (top.current < 0) {
        const bottom = Math.max(1, tip - SCAN + 1);
        const first = await scan(tip, bottom);
        if (!live()) return;
        setFound(first);
        setScanned({ top: tip, bottom });
      } else if (tip > top.current) {
        const fresh = await scan(tip, top.current + 1);
        if (!live()) return;
        setFound((f) => [...fresh, ...f]);
        setScanned((s) => (s ? { ...s, top: tip } : s));
      }
      top.current = Math.max(top.current, tip);
      setError(null);
    },
    REFRESH_MS,
    setError,
  );

  const older = async () => {
    if (!scanned || scanned.bottom <= 1) return;
    const bottom = Math.max(1, scanned.bottom - SCAN);
    const more = await scan(scanned.bottom - 1, bottom);
    setFound((f) => [...f, ...more]);
    setScanned({ ...scanned, bottom });
  };

  return (
    <section aria-labelledby="tamper-title">
      <h2 id="tamper-title">Tamper feed</h2>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <p class="muted">
        {scanned
          ? `TAMPERED records in blocks ${num(scanned.bottom)}–${num(scanned.top)}, newest first: ${num(found.length)}.`
          : 'Reading the latest blocks…'}
      </p>
      <ol class="feed">
        {found.map((f) => (
          <li key={f.record.id} data-record={f.record.id}>
            <p>
              <strong>{text(f.record.entity)}</strong> · {text(f.record.attribute)}{' '}
              <span class="muted">({ago(f.timestamp)})</span>
            </p>
            <p class="small">
              Broker {text(f.record.broker)}; observed <code>{text(f.record.observed)}</code>
            </p>
            <p class="small">
              <a href={`#/blocks/${f.height}/records/${f.index}`}>
                Block {num(f.height)}, record {f.index}
              </a>{' '}
              · <a href={`#/verify/proof/${f.height}/${f.index}`}>verify its proof</a> · id{' '}
              <code>{short(f.record.id, 16)}</code>
            </p>
          </li>
        ))}
      </ol>
      {scanned && scanned.bottom > 1 ? (
        <button type="button" onClick={() => void older()}>
          Scan older blocks
        </button>
      ) : null}
    </section>
  );
}
