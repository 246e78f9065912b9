import {
  ALG_COSIGNATURE_V1,
  formatVerifierKey,
  genesisFileContent,
  type WitnessStatusBody,
} from '@scriptorium/ledger-protocol';
import { describe, expect, it } from 'vitest';
import { fixture, parsedSpec, testKey } from '../../specs/ledger-cluster/fixtures.ts';
import { checkPublishedGenesis, checkpointEnv, validatorStatefulSet } from '../../specs/ledger-cluster/index.ts';
import { othersOf } from './membership-plan.ts';
import { type ClusterObservation, mergeWitnessViews } from './observe.ts';
import { diagnosisEvents, ledgerStatus, type Snapshot, witnessingStatus } from './status.ts';

const vkey = (i: number) => formatVerifierKey(`witness.test/w${i}`, ALG_COSIGNATURE_V1, testKey(20 + i).publicKey);
const withWitnesses = fixture({
  witnesses: [
    { name: 'w1', url: 'https://w1.example/tlog', key: vkey(1) },
    { name: 'w2', url: 'http://w2.example:7380', key: vkey(2) },
  ],
  witnessPolicy: { threshold: 2, unwitnessedAfterSeconds: 60 },
  checkpoints: { origin: 'example.org/ledger/test-1', intervalMs: 2000 },
});
const NOW = new Date('2026-11-27T10:00:00Z');

function view(over: Partial<WitnessStatusBody> = {}): WitnessStatusBody {
  return {
    origin: 'example.org/ledger/test-1',
    size: 120,
    threshold: 2,
    witnessed_size: 120,
    unwitnessed_since: null,
    witnesses: [
      { name: 'w1', size: 120, cosigned_at: NOW.getTime() / 1000 - 5, last_error: null, last_attempt: null },
      { name: 'w2', size: 120, cosigned_at: NOW.getTime() / 1000 - 5, last_error: null, last_attempt: null },
    ],
    ...over,
  };
}

function snapshot(witnesses: WitnessStatusBody | undefined, extra: Partial<ClusterObservation> = {}): Snapshot {
  return {
    desired: [],
    members: [],
    keys: new Map(),
    genesisSet: new Set(),
    podReady: new Map(),
    observation: {
      members: [],
      height: 119,
      activeKeys: [],
      unreachable: [],
      ...(witnesses ? { witnesses } : {}),
      ...extra,
    },
    membership: { pending: undefined, waiting: undefined, deleted: undefined },
    heldBack: [],
    now: NOW,
  };
}

describe('witnessing in the status', () => {
  const spec = parsedSpec(withWitnesses);

  it('every block covered: Witnessed=True/PolicyMet, per-witness fields', () => {
    const r = witnessingStatus(spec, snapshot(view()));
    expect(r.condition).toMatchObject({ type: 'Witnessed', status: 'True', reason: 'PolicyMet' });
    expect(r.fields.witnesses).toEqual([
      { name: 'w1', cosignedSize: 120, behind: 0, cosignedAt: '2026-11-27T09:59:55Z' },
      { name: 'w2', cosignedSize: 120, behind: 0, cosignedAt: '2026-11-27T09:59:55Z' },
    ]);
    expect(r.unwitnessedSeconds).toBe(0);
  });

  it('a witness down: True/CatchingUp within unwitnessedAfterSeconds, then False/Unwitnessed naming its error', () => {
    const down = (ageSeconds: number) =>
      view({
        size: 150,
        witnessed_size: 120,
        unwitnessed_since: NOW.getTime() - ageSeconds * 1000,
        witnesses: [
          { name: 'w1', size: 150, cosigned_at: 1, last_error: null, last_attempt: 5 },
          { name: 'w2', size: 120, cosigned_at: 1, last_error: 'unreachable: connect ECONNREFUSED', last_attempt: 5 },
        ],
      });
    expect(witnessingStatus(spec, snapshot(down(30))).condition).toMatchObject({
      status: 'True',
      reason: 'CatchingUp',
    });
    const late = witnessingStatus(spec, snapshot(down(90)));
    expect(late.condition).toMatchObject({ status: 'False', reason: 'Unwitnessed' });
    expect(late.condition?.message).toMatch(/for 90 s: w2: unreachable/);
    expect(late.fields.witnesses?.[1]).toMatchObject({ name: 'w2', behind: 30, lastError: /ECONNREFUSED/ });
    expect(late.fields.unwitnessedSince).toBe('2026-11-27T09:58:30Z');
    // Events: a Warning as it turns False, a Normal when it is True again.
    const report = ledgerStatus(withWitnesses, spec, snapshot(down(90)));
    expect(diagnosisEvents([], report).map((e) => e.reason)).toContain('Unwitnessed');
    const before = [
      { type: 'Witnessed', status: 'False' as const, reason: 'Unwitnessed', message: '', lastTransitionTime: '' },
    ];
    expect(diagnosisEvents(before, ledgerStatus(withWitnesses, spec, snapshot(view()))).map((e) => e.reason)).toContain(
      'WitnessedAgain',
    );
  });

  it('no witnesses configured: no condition (and a stale one is dropped); no node answered: no condition', () => {
    const plain = fixture();
    expect(ledgerStatus(plain, parsedSpec(plain), snapshot(view())).drop).toEqual(['Witnessed']);
    expect(witnessingStatus(spec, snapshot(undefined)).condition).toBeUndefined();
  });

  it("merges nodes' views: the most covered one, each witness's largest size, the newest error", () => {
    const a = view({ witnessed_size: 100, size: 130 });
    const b = view({
      witnessed_size: 110,
      size: 120,
      witnesses: [
        { name: 'w1', size: 110, cosigned_at: 2, last_error: null, last_attempt: 10 },
        { name: 'w2', size: 90, cosigned_at: 1, last_error: 'refused (HTTP 422)', last_attempt: 20 },
      ],
    });
    const merged = mergeWitnessViews([a, b]);
    expect(merged?.witnessed_size).toBe(110);
    expect(merged?.witnesses.map((w) => [w.name, w.size, w.last_error])).toEqual([
      ['w1', 120, null],
      ['w2', 120, 'refused (HTTP 422)'],
    ]);
    expect(mergeWitnessViews([])).toBeUndefined();
  });
});

describe('witnessing in the validators', () => {
  it('the environment names the witnesses, the threshold, the interval and the origin', () => {
    const env = Object.fromEntries(checkpointEnv(parsedSpec(withWitnesses)).map((e) => [e.name, e.value]));
    expect(env).toEqual({
      NODE_CHECKPOINT__INTERVAL_MS: '2000',
      NODE_CHECKPOINT__ORIGIN: 'example.org/ledger/test-1',
      NODE_WITNESS__WITNESSES: JSON.stringify([
        { name: 'w1', url: 'https://w1.example/tlog', key: vkey(1) },
        { name: 'w2', url: 'http://w2.example:7380', key: vkey(2) },
      ]),
      NODE_WITNESS__THRESHOLD: '2',
    });
    expect(checkpointEnv(parsedSpec(fixture())).map((e) => e.name)).toEqual(['NODE_CHECKPOINT__INTERVAL_MS']);
  });

  it("another organization's chain: the shared token, the trusted CA bundle mounted for peer TLS", () => {
    const lc = fixture({
      genesis: { from: { configMapRef: { name: 'org-a-genesis', namespace: 'org-a' } } },
      clusterTokenSecretRef: { name: 'chain-token', key: 'token' },
      tls: {
        mode: 'mutual',
        caSecretRef: { name: 'org-b-ca' },
        trustedCaSecretRef: { name: 'org-a-ca', key: 'ca.crt' },
      },
    });
    const sts = validatorStatefulSet(lc, parsedSpec(lc), 'ledger-v0');
    const pod = sts.spec.template.spec;
    expect(pod.volumes).toContainEqual({
      name: 'token',
      secret: { secretName: 'chain-token', items: [{ key: 'token', path: 'token' }], defaultMode: 0o440 },
    });
    expect(pod.volumes).toContainEqual({
      name: 'trusted-ca',
      secret: { secretName: 'org-a-ca', items: [{ key: 'ca.crt', path: 'ca.pem' }], defaultMode: 0o440 },
    });
    expect(pod.containers[0].env).toContainEqual({
      name: 'NODE_TLS__EXTRA_CA_FILE',
      value: '/etc/ledger-node/trusted-ca/ca.pem',
    });
  });

  it('a published genesis: a valid block 0, and the pinned hash when given', () => {
    const text = genesisFileContent([testKey(0).publicKey, testKey(1).publicKey], 'org-a.chain', 1);
    const block = checkPublishedGenesis(text, undefined);
    expect(typeof block).toBe('object');
    expect(checkPublishedGenesis(text, 'f'.repeat(64))).toMatch(/not the pinned/);
    expect(checkPublishedGenesis('{', undefined)).toMatch(/not JSON/);
    expect(checkPublishedGenesis(text.replace('"ADD"', '"REMOVE"'), undefined)).toMatch(
      /not a valid block 0|not a block/,
    );
  });

  it("other organizations' active validators are healthy as our nodes saw them, never ADDed by us", () => {
    const ours = testKey(0).publicKey;
    const theirs = [testKey(5).publicKey, testKey(6).publicKey];
    const listedAbsent = testKey(7).publicKey;
    const others = othersOf({
      desired: [{ name: 'ledger-v0', publicKey: ours }],
      externalKeys: [listedAbsent],
      observation: {
        members: [],
        height: 40,
        activeKeys: [ours, ...theirs],
        unreachable: [],
        peerHeights: new Map([
          [theirs[0] as string, 40],
          [theirs[1] as string, null],
          [listedAbsent, 40],
        ]),
      },
    });
    expect(others).toEqual([
      { publicKey: listedAbsent },
      { publicKey: theirs[0], ready: true, height: 40 },
      { publicKey: theirs[1] },
    ]);
  });
});
