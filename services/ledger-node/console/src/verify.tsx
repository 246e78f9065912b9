// The verifier, entirely in this browser, with @scriptorium/ledger-protocol's one verifier: a record from its light
// evidence (GET /evidence: its Merkle proof, its block's finality certificate and every membership block below it),
// a block's finality certificate against the validator set those membership blocks make active, and, on request,
// the whole chain block by block. The node serving the page is trusted for no verdict: the genesis is its block 0
// checked against the hash the reader pins (`?genesis=<hash>` or the field below), or shown to compare. A reader who
// trusts witnesses gives their keys (`?witness=NAME=KEY`, repeated, `?threshold=K`, or the fields): a record is then
// valid only with a checkpoint covering its block that enough of them cosigned.
import { Block, type FinalityReport } from '@scriptorium/ledger-protocol';
import { useEffect, useState } from 'preact/hooks';
import { blockAt } from './api.ts';
import { num, short } from './format.ts';
import {
  type GenesisUsed,
  type Verdict as Judged,
  judgeBlock,
  judgePasted,
  judgeRecord,
  judgeWholeChain,
  type Progress,
  readPin,
  readWitnessPolicy,
} from './verification.ts';

type Outcome =
  | { kind: 'running'; note: string }
  | { kind: 'done'; ok: boolean; title: string; lines: string[]; finality?: FinalityReport; genesis?: GenesisUsed };

function Verdict({ outcome }: { outcome: Outcome | null }) {
  if (!outcome) return null;
  if (outcome.kind === 'running')
    return (
      <p class="verdict running" role="status" aria-live="polite">
        {outcome.note}
      </p>
    );
  return (
    <div
      class={`verdict ${outcome.ok ? 'valid' : 'invalid'}`}
      role="status"
      aria-live="polite"
      data-verdict={outcome.ok ? 'valid' : 'invalid'}
    >
      <p class="verdict-title">
        {outcome.ok ? '✓ ' : '✗ '}
        {outcome.title}
      </p>
      <ul>
        {outcome.lines.map((l) => (
          <li key={l}>{l}</li>
        ))}
      </ul>
      {outcome.finality ? <Seals report={outcome.finality} /> : null}
      {outcome.genesis ? (
        <p class="muted small" data-genesis={outcome.genesis.hash}>
          {outcome.genesis.pinned ? 'Verified against the pinned genesis' : "Verified against this node's block 0"}:
          hash <code>{outcome.genesis.hash}</code>
          {outcome.genesis.pinned ? '.' : " — compare it with the cluster's genesis, or pin it (?genesis=<hash>)."}
        </p>
      ) : null}
    </div>
  );
}

function Seals({ report }: { report: FinalityReport }) {
  return (
    <div class="table-wrap">
      <table class="seals">
        <caption>
          Commit seals: {num(report.validSeals)} valid of {num(report.seals.length)}; {num(report.validators)}{' '}
          validators active, quorum {num(report.quorum)}
        </caption>
        <thead>
          <tr>
            <th scope="col">Validator</th>
            <th scope="col" class="n">
              Round
            </th>
            <th scope="col">Seal</th>
          </tr>
        </thead>
        <tbody>
          {report.seals.map((s, i) => (
            <tr key={`${s.validator}${i}`} class={s.status === 'valid' ? '' : 'bad'}>
              <td>
                <code title={s.validator}>{short(s.validator, 16)}</code>
              </td>
              <td class="n">{s.round}</td>
              <td>{s.status}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const fromVerdict = (title: string, v: Judged): Outcome => ({
  kind: 'done',
  ok: v.ok,
  title: v.ok ? `${title}: valid` : `${title}: not valid`,
  lines: v.lines,
  ...(v.finality ? { finality: v.finality } : {}),
  ...(v.genesis ? { genesis: v.genesis } : {}),
});

function useProgress(set: (o: Outcome) => void, what: string): Progress {
  return (done, total) => set({ kind: 'running', note: `${what}: block ${num(done)} of ${num(total)} checked…` });
}

/** The genesis hash pinned in the page's address (`#/verify/…?genesis=<hash>`), if any. */
function pinFromLocation(): string | undefined {
  const query = location.hash.split('?')[1];
  return readPin(query ? new URLSearchParams(query).get('genesis') : undefined);
}

/** The witness policy in the page's address (`?witness=NAME=KEY&witness=…&threshold=K`): the fields' first values. */
function policyFromLocation(): { witnesses: string; threshold: string } {
  const query = new URLSearchParams(location.hash.split('?')[1] ?? '');
  return { witnesses: query.getAll('witness').join('\n'), threshold: query.get('threshold') ?? '' };
}

/** On a block's page: its finality certificate, checked here on request. */
export function FinalityPanel({ block }: { block: Block }) {
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  useEffect(() => setOutcome(null), [block]);
  const run = async () => {
    setOutcome({ kind: 'running', note: 'Verifying…' });
    setOutcome(
      fromVerdict(`Finality of block ${num(block.header.height)}`, await judgeBlock(block, pinFromLocation())),
    );
  };
  return (
    <div class="panel">
      <h3>Finality certificate</h3>
      <p>
        {num(block.commit_signatures.length)} commit seals.{' '}
        <button type="button" onClick={run}>
          Verify in this browser
        </button>
      </p>
      <Verdict outcome={outcome} />
    </div>
  );
}

/** The verifier page: a record or a block from this node, JSON pasted by the reader, or the whole chain. */
export function VerifyPage({ proof, block, genesis }: { proof?: [number, number]; block?: number; genesis?: string }) {
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [height, setHeight] = useState(proof ? String(proof[0]) : block !== undefined ? String(block) : '');
  const [index, setIndex] = useState(proof ? String(proof[1]) : '0');
  const [pasted, setPasted] = useState('');
  const [pinText, setPinText] = useState(genesis ?? '');
  const [witnessText, setWitnessText] = useState(() => policyFromLocation().witnesses);
  const [thresholdText, setThresholdText] = useState(() => policyFromLocation().threshold);
  // A policy the reader gave and that cannot be read is refused, not ignored (as a bad pin is).
  const policy = () => readWitnessPolicy(witnessText, thresholdText);
  const badPolicy = (why: string): Outcome => ({
    kind: 'done',
    ok: false,
    title: 'Not a witness policy',
    lines: [`${why}. One NAME=KEY per line, KEY a witness's tlog-cosignature verifier key (name+id+base64).`],
  });
  const progress = useProgress(setOutcome, 'Verifying the whole chain from block 0');
  useEffect(() => setPinText(genesis ?? ''), [genesis]);
  // An unreadable pin is refused, not ignored: the reader asked for one.
  const pin = (): string | undefined | null => (pinText.trim() === '' ? undefined : (readPin(pinText) ?? null));
  const badPin = (): Outcome => ({
    kind: 'done',
    ok: false,
    title: 'Not a genesis hash',
    lines: ['The pinned genesis is the 64-hex SHA-256 hash of block 0, as `ledger-node verify-proof` prints it.'],
  });

  const run = async (title: string, note: string, judge: (pin: string | undefined) => Promise<Judged>) => {
    const p = pin();
    if (p === null) return setOutcome(badPin());
    setOutcome({ kind: 'running', note });
    setOutcome(fromVerdict(title, await judge(p)));
  };
  const checkRecord = (h: number, i: number, p = pin(), w = policy()) => {
    if (p === null) return setOutcome(badPin());
    if (typeof w === 'string') return setOutcome(badPolicy(w));
    void run(`Record ${i} of block ${num(h)}`, `Fetching the evidence of record ${i} of block ${num(h)}…`, () =>
      judgeRecord(h, i, p, w),
    );
  };
  const checkBlock = (h: number, p = pin()) => {
    if (p === null) return setOutcome(badPin());
    void run(`Finality of block ${num(h)}`, `Fetching block ${num(h)}…`, async () => judgeBlock(await blockAt(h), p));
  };
  useEffect(() => {
    // The address's pin, not the field's: this runs as the page opens.
    const p = genesis === undefined ? undefined : (readPin(genesis) ?? null);
    const fromAddress = policyFromLocation();
    if (proof) checkRecord(proof[0], proof[1], p, readWitnessPolicy(fromAddress.witnesses, fromAddress.threshold));
    else if (block !== undefined) checkBlock(block, p);
  }, [proof?.[0], proof?.[1], block, genesis]);

  const checkPasted = async (e: Event) => {
    e.preventDefault();
    let data: unknown;
    try {
      data = JSON.parse(pasted);
    } catch {
      setOutcome({
        kind: 'done',
        ok: false,
        title: 'Not JSON',
        lines: ['Paste evidence (GET /evidence), a proof, a block, or a chain (an array of blocks from block 0).'],
      });
      return;
    }
    const asBlock = Block.safeParse(data);
    if (asBlock.success) {
      // One block: its certificate against the set the membership blocks below it make active.
      await run(`Pasted block ${num(asBlock.data.header.height)}`, 'Verifying…', (p) => judgeBlock(asBlock.data, p));
      return;
    }
    // Evidence, a proof, a chain, or a proof and a chain: the same verdict as `ledger-node verify-proof --genesis`.
    const w = policy();
    if (typeof w === 'string') return setOutcome(badPolicy(w));
    await run('Pasted evidence', 'Verifying…', (p) => judgePasted(data, p, w));
  };

  return (
    <section aria-labelledby="verify-title">
      <h2 id="verify-title">Verify in this browser</h2>
      <p class="muted">
        Nothing here trusts the node that served this page: hashes and Ed25519 seals are computed by this browser
        (@noble, strict RFC 8032). A record is verified from its light evidence: its Merkle proof, its block's finality
        certificate, and every block below it that changed the validator set, each sealed by the set before it, from
        block 0 on. Pin block 0's hash to verify against the cluster's genesis rather than this node's. Give the
        witnesses you trust to require a checkpoint covering the record that they cosigned: a history rewritten with the
        validators' own keys is in none.
      </p>
      <form class="inline" onSubmit={(e) => e.preventDefault()}>
        <fieldset>
          <legend>The genesis to verify against</legend>
          <label for="v-genesis">Pinned genesis hash (empty: this node's block 0)</label>
          <input
            id="v-genesis"
            class="wide"
            spellcheck={false}
            autoComplete="off"
            value={pinText}
            onInput={(e) => setPinText((e.target as HTMLInputElement).value)}
          />
        </fieldset>
        <fieldset>
          <legend>Witness policy (optional)</legend>
          <label for="v-witnesses">Trusted witnesses, one NAME=KEY per line (KEY: the witness's verifier key)</label>
          <textarea
            id="v-witnesses"
            rows={2}
            spellcheck={false}
            value={witnessText}
            onInput={(e) => setWitnessText((e.target as HTMLTextAreaElement).value)}
          />
          <label for="v-threshold">How many must have cosigned (empty: all)</label>
          <input
            id="v-threshold"
            inputMode="numeric"
            value={thresholdText}
            onInput={(e) => setThresholdText((e.target as HTMLInputElement).value)}
          />
        </fieldset>
      </form>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          checkRecord(Number(height), Number(index));
        }}
      >
        <fieldset>
          <legend>A record from this node</legend>
          <label for="v-height">Height</label>
          <input
            id="v-height"
            inputMode="numeric"
            pattern="[0-9]+"
            required
            value={height}
            onInput={(e) => setHeight((e.target as HTMLInputElement).value)}
          />
          <label for="v-index">Record index</label>
          <input
            id="v-index"
            inputMode="numeric"
            pattern="[0-9]+"
            required
            value={index}
            onInput={(e) => setIndex((e.target as HTMLInputElement).value)}
          />
          <button type="submit">Verify record</button>
          <button type="button" onClick={() => checkBlock(Number(height))}>
            Verify the block's finality
          </button>
        </fieldset>
      </form>
      <form onSubmit={checkPasted}>
        <fieldset>
          <legend>Or paste JSON</legend>
          <label for="v-paste">
            Evidence (GET /evidence), a GET /proof body, a block, a chain (blocks from 0), or {'{proof, chain}'}
          </label>
          <textarea
            id="v-paste"
            rows={8}
            spellcheck={false}
            value={pasted}
            onInput={(e) => {
              setPasted((e.target as HTMLTextAreaElement).value);
              setOutcome(null);
            }}
          />
          <button type="submit">Verify pasted JSON</button>
        </fieldset>
      </form>
      <p>
        <button
          type="button"
          onClick={() => void run('The whole chain', 'Verifying the whole chain…', (p) => judgeWholeChain(progress, p))}
        >
          Verify the whole chain
        </button>{' '}
        <span class="muted small">every block from 1 to the tip: links, bodies and certificates</span>
      </p>
      <Verdict outcome={outcome} />
    </section>
  );
}
