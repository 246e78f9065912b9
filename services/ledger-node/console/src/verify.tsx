// The verifier, entirely in this browser: Merkle proofs up to merkle_root and the block hash, and finality
// certificates — the commit seals checked against the validator set active at the block's height, which the page
// derives itself from block 0 and the validator changes of the blocks before it (each verified in turn). The node
// serving the page is trusted for neither verdict; only block 0 is taken as served (compare its hash).
import {
  Block,
  type EvidenceReport,
  type FinalityReport,
  MerkleProofBody,
  verifyEvidence,
} from '@scriptorium/ledger-protocol';
import { useEffect, useState } from 'preact/hooks';
import { blockAt, home } from './api.ts';
import { num, short } from './format.ts';
import { type BlockVerdict, genesisHash, judgeBlock, judgeProof, type Progress } from './verification.ts';

type Outcome =
  | { kind: 'running'; note: string }
  | { kind: 'done'; ok: boolean; title: string; lines: string[]; finality?: FinalityReport; genesis?: string };

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
      {(outcome.genesis ?? genesisHash()) ? (
        <p class="muted small">
          Block 0 taken as served: hash <code>{outcome.genesis ?? genesisHash()}</code> — compare it with the cluster's
          genesis.
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

const fromVerdict = (title: string, v: BlockVerdict): Outcome => ({
  kind: 'done',
  ok: v.ok,
  title: v.ok ? `${title}: valid` : `${title}: not valid`,
  lines: [v.reason],
  ...(v.finality ? { finality: v.finality } : {}),
});

const fromReport = (title: string, r: EvidenceReport): Outcome => ({
  kind: 'done',
  ok: r.ok,
  title: r.ok ? `${title}: valid` : `${title}: not valid`,
  lines: r.lines,
  ...(r.finality ? { finality: r.finality } : {}),
  ...(r.genesisHash ? { genesis: r.genesisHash } : {}),
});

function useProgress(set: (o: Outcome) => void, what: string): Progress {
  return (done, total) => set({ kind: 'running', note: `${what}: block ${num(done)} of ${num(total)} checked…` });
}

/** On a block's page: its finality certificate, checked here on request. */
export function FinalityPanel({ block }: { block: Block }) {
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const progress = useProgress(setOutcome, 'Deriving the validator set from block 0');
  useEffect(() => setOutcome(null), [block]);
  const run = async () => {
    setOutcome({ kind: 'running', note: 'Verifying…' });
    setOutcome(fromVerdict(`Finality of block ${num(block.header.height)}`, await judgeBlock(block, progress)));
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

/** The verifier page: fetch a proof or a block from this node, or paste one (or a whole chain). */
export function VerifyPage({ proof, block }: { proof?: [number, number]; block?: number }) {
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [height, setHeight] = useState(proof ? String(proof[0]) : block !== undefined ? String(block) : '');
  const [index, setIndex] = useState(proof ? String(proof[1]) : '0');
  const [pasted, setPasted] = useState('');
  const progress = useProgress(setOutcome, 'Verifying the chain from block 0');

  const checkProof = async (h: number, i: number) => {
    setOutcome({ kind: 'running', note: `Fetching the proof of record ${i} of block ${num(h)}…` });
    try {
      const body = await home.proof(h, i);
      setOutcome(fromVerdict(`Record ${i} of block ${num(h)}`, await judgeProof(body, progress)));
    } catch (err) {
      setOutcome({ kind: 'done', ok: false, title: 'Could not verify', lines: [(err as Error).message] });
    }
  };
  const checkBlock = async (h: number) => {
    setOutcome({ kind: 'running', note: `Fetching block ${num(h)}…` });
    try {
      setOutcome(fromVerdict(`Finality of block ${num(h)}`, await judgeBlock(await blockAt(h), progress)));
    } catch (err) {
      setOutcome({ kind: 'done', ok: false, title: 'Could not verify', lines: [(err as Error).message] });
    }
  };
  useEffect(() => {
    if (proof) void checkProof(proof[0], proof[1]);
    else if (block !== undefined) void checkBlock(block);
  }, [proof?.[0], proof?.[1], block]);

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
        lines: ['Paste a proof, a block, or a chain (an array of blocks from block 0).'],
      });
      return;
    }
    const asBlock = Block.safeParse(data);
    if (asBlock.success) {
      // One block: judged against this node's chain below it (the set active at its height comes from block 0).
      setOutcome({ kind: 'running', note: 'Verifying…' });
      setOutcome(
        fromVerdict(`Pasted block ${num(asBlock.data.header.height)}`, await judgeBlock(asBlock.data, progress)),
      );
      return;
    }
    // A proof, a chain, or both: the same verdict as `ledger-node verify-proof` gives on the same JSON.
    const report = verifyEvidence(data);
    const title = MerkleProofBody.safeParse(data).success ? 'Pasted proof' : 'Pasted evidence';
    setOutcome(fromReport(title, report));
  };

  return (
    <section aria-labelledby="verify-title">
      <h2 id="verify-title">Verify in this browser</h2>
      <p class="muted">
        Nothing here trusts the node that served this page: hashes and Ed25519 seals are computed by this browser
        (@noble, strict RFC 8032), the validator set of a height is derived from block 0 and the changes of every block
        before it, each of which is verified too.
      </p>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void checkProof(Number(height), Number(index));
        }}
      >
        <fieldset>
          <legend>A record's Merkle proof from this node</legend>
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
          <button type="submit">Verify proof</button>
          <button type="button" onClick={() => void checkBlock(Number(height))}>
            Verify the block's finality
          </button>
        </fieldset>
      </form>
      <form onSubmit={checkPasted}>
        <fieldset>
          <legend>Or paste JSON</legend>
          <label for="v-paste">A GET /proof body, a block, a chain (blocks from 0), or {'{proof, chain}'}</label>
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
      <Verdict outcome={outcome} />
    </section>
  );
}
