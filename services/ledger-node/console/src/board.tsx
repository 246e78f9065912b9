// The cluster board: every node in the serving node's peer registry, with its height, round, lag behind the best
// node, whether it is a validator, and whether it answers this browser. Refreshes every 3 s without reloading.
import { useState } from 'preact/hooks';
import { home, NodeApi, siblingBase } from './api.ts';
import { num, short } from './format.ts';
import { usePoll } from './load.tsx';
import { type Column, Table } from './table.tsx';

interface Row {
  nodeId: string;
  publicKey: string;
  /** Where this browser reaches it ('' for the node serving the page). */
  base: string;
  address: string | null;
  answers: boolean;
  error?: string;
  height?: number;
  round?: number;
  isValidator?: boolean;
  /** Height the serving node last saw for it (its own pull-sync poll): not verified, a hint when unreachable. */
  heightSeen: number | null;
}

const REFRESH_MS = 3000;

const COLUMNS: Column[] = [
  { label: 'Node' },
  { label: 'Answers' },
  { label: 'Height', numeric: true },
  { label: 'Round', numeric: true },
  { label: 'Lag', numeric: true },
  { label: 'Role' },
  { label: 'Key' },
];

async function probe(row: Row): Promise<Row> {
  const api = row.base === '' ? home : new NodeApi(row.base);
  try {
    const [chain, peers] = await Promise.all([api.chain(2500), api.peers(2500)]);
    return { ...row, answers: true, height: chain.height, round: peers.round, isValidator: chain.is_validator };
  } catch (err) {
    return { ...row, answers: false, error: (err as Error).message };
  }
}

async function loadBoard(): Promise<Row[]> {
  const list = await home.peers();
  const rows: Row[] = [
    { nodeId: list.node_id, publicKey: list.public_key, base: '', address: null, answers: false, heightSeen: null },
    ...list.peers.map((p) => ({
      nodeId: p.node_id,
      publicKey: p.public_key,
      base: siblingBase(p.address),
      address: p.address,
      answers: false,
      heightSeen: p.height_seen,
    })),
  ];
  return Promise.all(rows.map(probe));
}

export function Board() {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [updated, setUpdated] = useState<number | null>(null);

  usePoll(
    async (live) => {
      const next = await loadBoard();
      if (!live()) return;
      setRows(next);
      setError(null);
      setUpdated(Date.now());
    },
    REFRESH_MS,
    setError,
  );

  if (error && !rows)
    return (
      <p class="error" role="alert">
        Cannot read the peer list: {error}
      </p>
    );
  if (!rows) return <p aria-busy="true">Reading the cluster…</p>;
  const best = Math.max(...rows.map((r) => (r.answers ? (r.height ?? 0) : (r.heightSeen ?? 0))));
  return (
    <section aria-labelledby="board-title">
      <h2 id="board-title">Cluster board</h2>
      <p class="muted">
        {num(rows.length)} nodes in the registry; best height {num(best)}. Refreshed every {REFRESH_MS / 1000} s
        {updated ? `, last at ${new Date(updated).toLocaleTimeString()}` : ''}.
      </p>
      <Table
        class="board"
        columns={COLUMNS}
        rows={rows}
        row={(r) => (
          <tr key={r.publicKey} data-node={r.nodeId} class={r.answers ? '' : 'down'}>
            <th scope="row">
              {r.nodeId}
              {r.base === '' ? <span class="tag">serving this page</span> : null}
              {r.address ? <div class="muted small">{r.address}</div> : null}
            </th>
            <td>
              {r.answers ? (
                <span class="ok">yes</span>
              ) : (
                <span class="bad" title={r.error}>
                  no{r.heightSeen !== null ? ` (seen at ${num(r.heightSeen)} by this node)` : ''}
                </span>
              )}
            </td>
            <td class="n" data-field="height">
              {r.height !== undefined ? num(r.height) : '—'}
            </td>
            <td class="n">{r.round !== undefined ? num(r.round) : '—'}</td>
            <td class="n">{r.height !== undefined ? num(best - r.height) : '—'}</td>
            <td>{r.isValidator === undefined ? '—' : r.isValidator ? 'validator' : 'follower'}</td>
            <td>
              <code title={r.publicKey}>{short(r.publicKey, 12)}</code>
            </td>
          </tr>
        )}
      />
    </section>
  );
}
