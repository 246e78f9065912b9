// The CLI and configuration as an operator meets them: keygen, genesis, a bad variable exits with
// one line naming it.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Block } from '@scriptorium/ledger-protocol';
import vectors from '@scriptorium/ledger-protocol/test-vectors' with { type: 'json' };
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'ledger-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('cli', () => {
  it('keygen writes a 0600 key file and prints the public key; refuses to overwrite', () => {
    const file = join(dir, 'k.json');
    const res = runCli(['keygen', '--out', file]);
    expect(res.status).toBe(0);
    const pub = res.stdout.trim();
    expect(pub).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.parse(readFileSync(file, 'utf8')).public_key).toBe(pub);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(runCli(['keygen', '--out', file]).status).toBe(2);
  });

  it('genesis builds block 0 from public keys (args or stdin)', () => {
    const keys = [
      runCli(['keygen', '--out', join(dir, 'a.json')]).stdout.trim(),
      runCli(['keygen', '--out', join(dir, 'b.json')]).stdout.trim(),
    ];
    const res = runCli(['genesis', '--chain-id', 'c1', '--timestamp', '5', ...keys]);
    expect(res.status, res.stderr).toBe(0);
    const block = Block.parse(JSON.parse(res.stdout));
    expect(block.header.height).toBe(0);
    expect(block.validator_changes.map((c) => c.validator)).toEqual([...keys].sort());
    const fromStdin = runCli(['genesis', '--chain-id', 'c1', '--timestamp', '5', '-'], keys.join('\n'));
    expect(fromStdin.stdout).toBe(res.stdout);
    expect(runCli(['genesis', '--chain-id', 'c1', 'xyz']).stderr).toMatch(/not a 64-hex public key/);
  });

  it.each([
    [{ NODE_CONSENSUS__BIND_PORT: 'eighty' }, 'NODE_CONSENSUS__BIND_PORT'],
    [{ NODE_TLS__ENABLED: 'true' }, 'NODE_TLS__CERT_FILE'],
    [{ NODE_PEERS: 'bogus' }, 'NODE_PEERS'],
    [{ MAX_BODY_BYTES: '-1' }, 'MAX_BODY_BYTES'],
    [{ NODE_CLUSTER_TOKEN_FILE: '/nonexistent/token' }, 'NODE_CLUSTER_TOKEN_FILE'],
  ])('start with %j exits 2 with one line naming %s', (env, variable) => {
    const res = runCli(['start'], undefined, env);
    expect(res.status).toBe(2);
    const lines = res.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(variable);
  });

  it('verify-proof refuses garbage with exit 1 and one line', () => {
    const res = runCli(['verify-proof', '-'], 'not json');
    expect(res.status).toBe(1);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.each(vectors.light.map((v) => [v.name, v] as const))('verify-proof --genesis, light evidence: %s', (_name, v) => {
    const genesis = join(dir, 'vectors-genesis.json');
    writeFileSync(genesis, JSON.stringify(vectors.chain[0]));
    const res = runCli(['verify-proof', '--genesis', genesis, '-'], JSON.stringify(v.evidence));
    expect(res.status, `${res.stdout}${res.stderr}`).toBe(v.valid ? 0 : 1);
    if (v.refusal) expect(res.stderr).toContain(v.refusal);
    else expect(res.stdout).toContain(`valid (genesis ${vectors.genesis_hash})`);
    // The genesis a hostile node serves (the real header, another body) is refused as a pin.
    if (v.served_genesis) {
      writeFileSync(genesis, JSON.stringify(v.served_genesis));
      const pinned = runCli(['verify-proof', '--genesis', genesis, '-'], JSON.stringify(v.evidence));
      expect(pinned.status).toBe(1);
      expect(pinned.stderr).toContain('merkle_root mismatch');
    }
  });

  const policyFlags = [
    ...vectors.witness_policy.witnesses.flatMap((w) => ['--witness', `${w.name}=${w.key}`]),
    '--witness-threshold',
    String(vectors.witness_policy.threshold),
  ];
  it.each(vectors.witnessed.map((v) => [v.name, v] as const))(
    'verify-proof --witness, with a checkpoint: %s',
    (_name, v) => {
      const genesis = join(dir, 'vectors-genesis.json');
      writeFileSync(genesis, JSON.stringify(vectors.chain[0]));
      const res = runCli(['verify-proof', '--genesis', genesis, ...policyFlags, '-'], JSON.stringify(v.evidence));
      expect(res.status, `${res.stdout}${res.stderr}`).toBe(v.valid ? 0 : 1);
      if (v.refusal) expect(res.stderr).toContain(v.refusal);
      else expect(res.stdout).toMatch(/cosigned by w1 \(.*\), w2 \(.*\): 2 of 2 trusted witnesses/);
      const free = runCli(['verify-proof', '--genesis', genesis, '-'], JSON.stringify(v.evidence));
      expect(free.status, `${free.stdout}${free.stderr}`).toBe(v.valid_without_policy ? 0 : 1);
    },
  );

  it('verify-proof: a bad witness policy exits 2 with the reason; note-key prints both kinds of key', () => {
    const genesis = join(dir, 'vectors-genesis.json');
    writeFileSync(genesis, JSON.stringify(vectors.chain[0]));
    const [w1] = vectors.witness_policy.witnesses as [{ name: string; key: string }];
    const bad = (flags: string[]) => runCli(['verify-proof', '--genesis', genesis, ...flags, '-'], '{}');
    expect(bad(['--witness', 'w1']).stderr).toMatch(/NAME=KEY/);
    expect(bad(['--witness', `w1=${w1.key}`, '--witness-threshold', '2']).stderr).toMatch(/want 1 to 1/);
    expect(bad(['--witness', 'w1=x+00000000+AQ==']).stderr).toMatch(/witness w1/);
    expect(bad(['--witness-threshold', '1']).stderr).toMatch(/without --witness/);
    for (const flags of [['--witness', 'w1']]) expect(bad(flags).status).toBe(2);
    const key = join(dir, 'note.json');
    const pub = runCli(['keygen', '--out', key]).stdout.trim();
    const log = runCli(['note-key', '--origin', 'scriptorium.dev/ledger/c1', '--key', key]);
    expect(log.stdout).toMatch(/^scriptorium\.dev\/ledger\/c1\+[0-9a-f]{8}\+A[A-Za-z0-9+/]{43}\n$/);
    const cosigner = runCli(['note-key', '--witness', 'witness.example/w1', pub]);
    expect(cosigner.stdout).toMatch(/^witness\.example\/w1\+[0-9a-f]{8}\+B[A-Za-z0-9+/]{43}\n$/);
    expect(runCli(['note-key', '--witness', 'a b', pub]).status).toBe(2);
  });

  it('verify-proof: light evidence without --genesis is refused and says what is missing; a bad --genesis exits 2', () => {
    const valid = vectors.light.find((v) => v.valid) as (typeof vectors.light)[0];
    const res = runCli(['verify-proof', '-'], JSON.stringify(valid.evidence));
    expect(res.status).toBe(1);
    expect(res.stderr).toMatch(/pinned genesis/);
    expect(runCli(['verify-proof', '--genesis', join(dir, 'missing.json'), '-'], '{}').status).toBe(2);
  });
});
