// The block explorer: the latest blocks, one block (header, records, validator changes, commit seals), one record,
// and search by height or record id. Links are hash routes (#/blocks/12, #/blocks/12/records/3).
import { type Block, blockHash, type IntegrityRecord } from '@scriptorium/ledger-protocol';
import { useEffect, useState } from 'preact/hooks';
import { blockAt, home } from './api.ts';
import { ago, num, short, when } from './format.ts';
import { Load, useLoad } from './load.tsx';
import { type Column, Table } from './table.tsx';
import { FinalityPanel } from './verify.tsx';

const PAGE = 20;
/** Rows a block's record table shows at first (a 2,000-record block renders in pages). */
const RECORD_PAGE = 250;

const BLOCK_COLUMNS: Column[] = [
  { label: 'Height', numeric: true },
  { label: 'Time' },
  { label: 'Records', numeric: true },
  { label: 'Changes', numeric: true },
  { label: 'Seals', numeric: true },
  { label: 'Hash' },
];
const RECORD_COLUMNS: Column[] = [
  { label: '#', numeric: true },
  { label: 'Entity' },
  { label: 'Attribute' },
  { label: 'Verdict' },
  { label: 'Id' },
];

export function LatestBlocks() {
  const [top, setTop] = useState<number | null>(null);
  const tip = useLoad(() => home.chain().then((c) => c.height), []);
  const height = top ?? tip.value ?? null;
  const blocks = useLoad(async () => {
    if (height === null) return [];
    const heights = Array.from({ length: Math.min(PAGE, height + 1) }, (_, i) => height - i);
    return Promise.all(heights.map(blockAt));
  }, [height]);
  return (
    <section aria-labelledby="blocks-title">
      <h2 id="blocks-title">Latest blocks</h2>
      <Search />
      <Load state={blocks}>
        {(list) => (
          <>
            <Table
              columns={BLOCK_COLUMNS}
              rows={list}
              row={(b) => (
                <tr key={b.header.height}>
                  <td class="n">
                    <a href={`#/blocks/${b.header.height}`}>{num(b.header.height)}</a>
                  </td>
                  <td title={when(b.header.timestamp)}>{ago(b.header.timestamp)}</td>
                  <td class="n">{num(b.records.length)}</td>
                  <td class="n">{num(b.validator_changes.length)}</td>
                  <td class="n">{num(b.commit_signatures.length)}</td>
                  <td>
                    <code>{short(blockHash(b.header), 12)}</code>
                  </td>
                </tr>
              )}
            />
            {height !== null && height + 1 > PAGE ? (
              <nav class="pager" aria-label="Older blocks">
                <button type="button" onClick={() => setTop(Math.max(PAGE - 1, height - PAGE))}>
                  Older
                </button>
                {top !== null ? (
                  <button type="button" onClick={() => setTop(null)}>
                    Latest
                  </button>
                ) : null}
              </nav>
            ) : null}
          </>
        )}
      </Load>
    </section>
  );
}

function Search() {
  const [query, setQuery] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const q = query.trim();
    if (/^\d{1,15}$/.test(q)) {
      location.hash = `#/blocks/${Number(q)}`;
      return;
    }
    if (q === '') return;
    // A record id: scan from the tip down (each block fetched once, cached).
    setStatus('Searching…');
    const tip = (await home.chain()).height;
    for (let h = tip; h >= 1; h--) {
      const block = await blockAt(h);
      const i = block.records.findIndex((r) => r.id === q);
      if (i >= 0) {
        setStatus(null);
        location.hash = `#/blocks/${h}/records/${i}`;
        return;
      }
      if ((tip - h) % 50 === 0) setStatus(`Searching… block ${num(h)}`);
    }
    setStatus(`No record with id ${q} on this chain.`);
  };
  return (
    <form class="search" onSubmit={submit}>
      <label for="search">Height or record id</label>
      <input
        id="search"
        value={query}
        onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
        autocomplete="off"
      />
      <button type="submit">Find</button>
      {status ? <span role="status">{status}</span> : null}
    </form>
  );
}

export function BlockView({ height }: { height: number }) {
  const state = useLoad(() => blockAt(height), [height]);
  return <Load state={state}>{(block) => <BlockDetail block={block} />}</Load>;
}

function BlockDetail({ block }: { block: Block }) {
  const h = block.header;
  const [shown, setShown] = useState(RECORD_PAGE);
  useEffect(() => setShown(RECORD_PAGE), [h.height]);
  return (
    <section aria-labelledby="block-title" data-block={h.height}>
      <h2 id="block-title">Block {num(h.height)}</h2>
      <nav class="pager" aria-label="Neighbouring blocks">
        {h.height > 0 ? <a href={`#/blocks/${h.height - 1}`}>← Block {num(h.height - 1)}</a> : null}
        <a href={`#/blocks/${h.height + 1}`}>Block {num(h.height + 1)} →</a>
      </nav>
      <dl class="fields">
        <dt>Time</dt>
        <dd>
          {when(h.timestamp)} ({ago(h.timestamp)})
        </dd>
        <dt>Chain</dt>
        <dd>{h.chain_id}</dd>
        <dt>Parent hash</dt>
        <dd>
          <code>{h.parent_hash}</code>
        </dd>
        <dt>Merkle root</dt>
        <dd>
          <code>{h.merkle_root}</code>
        </dd>
        <dt>Proposer</dt>
        <dd>
          <code>{h.proposer || '—'}</code>
        </dd>
        <dt>Records, changes</dt>
        <dd>
          {num(h.record_count)}, {num(h.change_count)}
        </dd>
      </dl>
      {h.height > 0 ? <FinalityPanel block={block} /> : <p class="muted">Block 0 is the genesis: it has no seals.</p>}
      <h3>Validator changes</h3>
      {block.validator_changes.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul>
          {block.validator_changes.map((c) => (
            <li key={`${c.action}${c.validator}`}>
              {c.action} <code>{c.validator}</code>
            </li>
          ))}
        </ul>
      )}
      <h3>Records ({num(block.records.length)})</h3>
      {block.records.length === 0 ? (
        <p class="muted">No records (an empty block).</p>
      ) : (
        <>
          <RecordTable height={h.height} records={block.records.slice(0, shown)} />
          {shown < block.records.length ? (
            <button type="button" onClick={() => setShown(shown + RECORD_PAGE * 4)}>
              Show more ({num(block.records.length - shown)} left)
            </button>
          ) : null}
        </>
      )}
    </section>
  );
}

/** The fields a watcher record usually has (others are in the record view). */
const text = (v: unknown) => (v === undefined || v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

function RecordTable({ height, records }: { height: number; records: IntegrityRecord[] }) {
  return (
    <Table
      class="records"
      columns={RECORD_COLUMNS}
      rows={records}
      row={(r, i) => (
        <tr key={r.id} class={r.verdict === 'TAMPERED' ? 'tampered' : ''}>
          <td class="n">
            <a href={`#/blocks/${height}/records/${i}`}>{i}</a>
          </td>
          <td>{text(r.entity)}</td>
          <td>{text(r.attribute)}</td>
          <td>{text(r.verdict)}</td>
          <td>
            <code title={r.id}>{short(r.id, 16)}</code>
          </td>
        </tr>
      )}
    />
  );
}

export function RecordView({ height, index }: { height: number; index: number }) {
  const state = useLoad(() => blockAt(height), [height]);
  return (
    <Load state={state}>
      {(block) => {
        const record = block.records[index];
        if (!record)
          return (
            <p class="error">
              Block {num(height)} has no record {index}.
            </p>
          );
        return (
          <section aria-labelledby="record-title">
            <h2 id="record-title">
              Record {index} of <a href={`#/blocks/${height}`}>block {num(height)}</a>
            </h2>
            <pre class="json">{JSON.stringify(record, null, 2)}</pre>
            <p>
              <a class="button" href={`#/verify/proof/${height}/${index}`}>
                Verify its Merkle proof and its block's finality in this browser
              </a>
            </p>
          </section>
        );
      }}
    </Load>
  );
}
