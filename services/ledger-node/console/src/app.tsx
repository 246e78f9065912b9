// The console: a header with the chain and the node, a navigation, and one view per hash route.
import { useEffect, useState } from 'preact/hooks';
import { home } from './api.ts';
import { Board } from './board.tsx';
import { BlockView, LatestBlocks, RecordView } from './explorer.tsx';
import { short } from './format.ts';
import { useLoad } from './load.tsx';
import { TamperFeed } from './tamper.tsx';
import { VerifyPage } from './verify.tsx';

type Route =
  | { view: 'board' }
  | { view: 'blocks' }
  | { view: 'block'; height: number }
  | { view: 'record'; height: number; index: number }
  | { view: 'tamper' }
  | { view: 'verify'; proof?: [number, number]; block?: number; genesis?: string };

/** `#/blocks/12/records/3` → the route; anything unknown is the board. `?genesis=<hash>` pins the verify page. */
export function parseRoute(hash: string): Route {
  const [path = '', query] = hash.split('?');
  const parts = path.replace(/^#\/?/, '').split('/').filter(Boolean);
  const n = (s: string | undefined) => (s !== undefined && /^\d{1,15}$/.test(s) ? Number(s) : undefined);
  const [a, b, c, d] = parts;
  if (a === 'blocks') {
    const h = n(b);
    if (h === undefined) return { view: 'blocks' };
    const i = n(d);
    return c === 'records' && i !== undefined ? { view: 'record', height: h, index: i } : { view: 'block', height: h };
  }
  if (a === 'tamper') return { view: 'tamper' };
  if (a === 'verify') {
    const h = n(c);
    const i = n(d);
    const pin = query ? new URLSearchParams(query).get('genesis') : null;
    const genesis = pin !== null ? { genesis: pin } : {};
    if (b === 'proof' && h !== undefined && i !== undefined) return { view: 'verify', proof: [h, i], ...genesis };
    if (b === 'block' && h !== undefined) return { view: 'verify', block: h, ...genesis };
    return { view: 'verify', ...genesis };
  }
  return { view: 'board' };
}

const NAV: Array<[string, string, Route['view'][]]> = [
  ['#/', 'Cluster', ['board']],
  ['#/blocks', 'Blocks', ['blocks', 'block', 'record']],
  ['#/tamper', 'Tamper feed', ['tamper']],
  ['#/verify', 'Verify', ['verify']],
];

export function App() {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => {
      setRoute(parseRoute(location.hash));
      document.getElementById('main')?.focus();
    };
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  const chain = useLoad(() => home.chain(), []);
  return (
    <>
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header>
        <h1>Ledger console</h1>
        <p class="muted small">
          {chain.value
            ? `node ${chain.value.node_id} · tip ${short(chain.value.latest_hash, 12)} · ${chain.value.validators} validators, quorum ${chain.value.quorum}`
            : 'reading the node…'}
        </p>
        <nav aria-label="Views">
          <ul>
            {NAV.map(([href, label, views]) => (
              <li key={href}>
                <a href={href} aria-current={views.includes(route.view) ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        {route.view === 'board' ? <Board /> : null}
        {route.view === 'blocks' ? <LatestBlocks /> : null}
        {route.view === 'block' ? <BlockView height={route.height} /> : null}
        {route.view === 'record' ? <RecordView height={route.height} index={route.index} /> : null}
        {route.view === 'tamper' ? <TamperFeed /> : null}
        {route.view === 'verify' ? (
          <VerifyPage
            {...(route.proof ? { proof: route.proof } : {})}
            {...(route.block !== undefined ? { block: route.block } : {})}
            {...(route.genesis !== undefined ? { genesis: route.genesis } : {})}
          />
        ) : null}
      </main>
    </>
  );
}
