import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@scriptorium/ledger-node';
import { NODE_SETTING_NAMES, type NodeEnvVar } from '@scriptorium/ledger-protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../kube/types.ts';
import { fixture, parsedSpec, testKey, watched } from './fixtures.ts';
import {
  clientIngress,
  clientService,
  currentTlsSecret,
  desiredValidatorNames,
  genesisConfigMap,
  genesisFileContent,
  genesisValidators,
  keySecret,
  peerList,
  peersConfigMap,
  podDisruptionBudget,
  secretValue,
  selectorString,
  tlsRenewalDue,
  tlsSecret,
  tlsSecretName,
  tokenSecret,
  updateAllowed,
  validatorEnv,
  validatorIndex,
  validatorService,
  validatorStatefulSet,
} from './index.ts';

const LEDGER_MAIN = join(import.meta.dirname, '../../../../services/ledger-node/src/main.ts');

describe('validator names', () => {
  it('are the first N of <cluster>-v0, -v1, … skipping retired names', () => {
    expect(desiredValidatorNames('ledger', 4)).toEqual(['ledger-v0', 'ledger-v1', 'ledger-v2', 'ledger-v3']);
    expect(desiredValidatorNames('ledger', 4, ['ledger-v1'])).toEqual([
      'ledger-v0',
      'ledger-v2',
      'ledger-v3',
      'ledger-v4',
    ]);
    expect(desiredValidatorNames('ledger', 3, ['ledger-v0', 'ledger-v2', 'other-v1'])).toEqual([
      'ledger-v1',
      'ledger-v3',
      'ledger-v4',
    ]);
    expect(desiredValidatorNames('ledger', 0)).toEqual([]);
    // Scaling down drops the highest names; a retired name never comes back while it is listed.
    expect(desiredValidatorNames('ledger', 2, ['ledger-v1'])).toEqual(['ledger-v0', 'ledger-v2']);
  });
  it('property: exactly `count` distinct names, none retired, in index order, each parsing back', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60 }),
        fc.array(
          fc.oneof(
            fc.integer({ min: 0, max: 80 }).map((i) => `ledger-v${i}`),
            fc.string(),
          ),
          { maxLength: 30 },
        ),
        (count, retire) => {
          const names = desiredValidatorNames('ledger', count, retire);
          expect(names).toHaveLength(count);
          expect(new Set(names).size).toBe(count);
          for (const n of names) expect(retire).not.toContain(n);
          const indexes = names.map((n) => validatorIndex('ledger', n) ?? -1);
          expect(indexes.every((i, k) => i >= 0 && (k === 0 || i > (indexes[k - 1] ?? -1)))).toBe(true);
        },
      ),
      { numRuns: 200, seed: 42 },
    );
  });
  it('parse back to their index, and nothing else does', () => {
    expect(validatorIndex('ledger', 'ledger-v12')).toBe(12);
    expect(validatorIndex('ledger', 'ledger-v01')).toBeUndefined();
    expect(validatorIndex('ledger', 'ledger-x1')).toBeUndefined();
    expect(validatorIndex('ledger', 'ledger-v1-0')).toBeUndefined();
  });
});

describe('secrets', () => {
  const lc = fixture();
  it('key Secret holds the keygen file format; the public key is an annotation, the private key only in data', () => {
    const k = testKey(0);
    const s = keySecret(lc, 'ledger-v0', k);
    expect(s.metadata.name).toBe('ledger-v0-key');
    expect(s.metadata.annotations?.['scriptorium.dev/public-key']).toBe(k.publicKey);
    expect(JSON.stringify(s.metadata)).not.toContain(k.privateKey);
    expect(JSON.parse(secretValue(s, 'key.json') ?? '')).toEqual({
      public_key: k.publicKey,
      private_key: k.privateKey,
    });
    expect(s.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'LedgerCluster', name: 'ledger', controller: true });
    // A fresh key each time when none is given.
    expect(keySecret(lc, 'ledger-v0').data['key.json']).not.toBe(keySecret(lc, 'ledger-v0').data['key.json']);
  });
  it('token is random and long enough for the node (≥ 32 characters)', () => {
    const a = secretValue(tokenSecret(lc), 'token') ?? '';
    expect(a.length).toBeGreaterThanOrEqual(32);
    expect(secretValue(tokenSecret(lc), 'token')).not.toBe(a);
  });
});

describe('genesis', () => {
  const lc = fixture();
  const spec = parsedSpec(lc);
  const validators = [0, 1, 2, 3].map((i) => ({ name: `ledger-v${i}`, publicKey: testKey(i).publicKey }));
  it('is byte for byte the image genesis command output', () => {
    const keys = validators.map((v) => v.publicKey);
    const cli = execFileSync(
      process.execPath,
      [LEDGER_MAIN, 'genesis', '--chain-id', 'test-1', '--timestamp', '1700000000000', ...keys],
      { encoding: 'utf8' },
    );
    expect(genesisFileContent(keys, 'test-1', 1_700_000_000_000)).toBe(cli);
  });
  it('ConfigMap is immutable and records its validators', () => {
    const cm = genesisConfigMap(lc, spec, validators, new Date(1_700_000_000_000));
    expect(cm.immutable).toBe(true);
    expect(genesisValidators(cm)).toEqual(validators.map((v) => v.name));
    const block = JSON.parse(cm.data['genesis.json']);
    expect(block.header.chain_id).toBe('test-1');
    expect(block.header.height).toBe(0);
    expect(block.header.timestamp).toBe(1_700_000_000_000);
    expect(block.validator_changes).toHaveLength(4);
  });
  it('uses spec.genesis.time when given', () => {
    const timed = fixture({ genesis: { chainId: 'c', time: '2026-01-01T00:00:00Z' } });
    const cm = genesisConfigMap(timed, parsedSpec(timed), validators, new Date());
    expect(JSON.parse(cm.data['genesis.json']).header.timestamp).toBe(Date.parse('2026-01-01T00:00:00Z'));
  });
});

describe('peers', () => {
  it('lists every validator by Service DNS name with its key, then the external validators', () => {
    const ext = 'ab'.repeat(32);
    const lc = fixture({ externalValidators: [{ publicKey: ext, address: 'ledger.partner.example:8000' }] });
    const list = peerList(lc, parsedSpec(lc), [
      { name: 'ledger-v0', publicKey: testKey(0).publicKey },
      { name: 'ledger-v1', publicKey: testKey(1).publicKey },
    ]).split(',');
    expect(list).toEqual([
      `ledger-v0@ledger-v0.chain.svc:8000|${testKey(0).publicKey}`,
      `ledger-v1@ledger-v1.chain.svc:8000|${testKey(1).publicKey}`,
      `ext-${ext.slice(0, 12)}@ledger.partner.example:8000|${ext}`,
    ]);
    const cm = peersConfigMap(lc, parsedSpec(lc), []);
    expect(cm.data.peers).toBe(`ext-${ext.slice(0, 12)}@ledger.partner.example:8000|${ext}`);
  });
});

describe('services', () => {
  const lc = fixture();
  it('per validator: peer traffic reaches a pod before it is ready', () => {
    const svc = validatorService(lc, 'ledger-v2');
    expect(svc.metadata.name).toBe('ledger-v2');
    expect(svc.spec.publishNotReadyAddresses).toBe(true);
    expect(svc.spec.selector['scriptorium.dev/validator']).toBe('ledger-v2');
  });
  it('client Service selects every validator pod, the same selector as status.selector', () => {
    const svc = clientService(lc);
    expect(svc.metadata.name).toBe('ledger');
    expect(svc.spec.publishNotReadyAddresses).toBeUndefined();
    const fromString = Object.fromEntries(
      selectorString(lc)
        .split(',')
        .map((kv) => kv.split('=')),
    );
    expect(svc.spec.selector).toEqual(fromString);
  });
});

describe('Ingress', () => {
  it('none without spec.ingress (an earlier one is deleted); with it, only the read paths and /ui, to the client Service', () => {
    expect(clientIngress(fixture(), parsedSpec(fixture()))).toBeNull();
    const lc = fixture({
      ingress: { host: 'ledger.example.org', annotations: { 'nginx.ingress.kubernetes.io/backend-protocol': 'HTTPS' } },
    });
    const ing = clientIngress(lc, parsedSpec(lc)) as KubeObject;
    expect(ing.metadata.name).toBe('ledger');
    expect(ing.metadata.annotations).toEqual({ 'nginx.ingress.kubernetes.io/backend-protocol': 'HTTPS' });
    expect(ing.spec.tls).toBeUndefined();
    expect(ing.spec.ingressClassName).toBeUndefined();
    const paths = ing.spec.rules[0].http.paths as Array<{ path: string; pathType: string; backend: unknown }>;
    expect(paths.map((p) => p.path)).toEqual([
      '/health',
      '/chain',
      '/blocks',
      '/proof',
      '/evidence',
      '/checkpoint',
      '/checkpoint/proof',
      '/checkpoint/witnesses',
      '/ui',
    ]);
    expect(new Set(paths.map((p) => JSON.stringify(p.backend)))).toEqual(
      new Set([JSON.stringify({ service: { name: 'ledger', port: { name: 'api' } } })]),
    );
  });
});

describe('StatefulSet', () => {
  it("the validator's container takes spec.resources, else the defaults", () => {
    const container = (lc: ReturnType<typeof fixture>) =>
      validatorStatefulSet(lc, parsedSpec(lc), 'ledger-v0').spec.template.spec.containers[0];
    expect(container(fixture()).resources).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { memory: '512Mi' },
    });
    const small = { requests: { cpu: '25m', memory: '96Mi' }, limits: { memory: '384Mi' } };
    expect(container(fixture({ resources: small })).resources).toEqual(small);
  });

  it('one replica, its own volume, the pod hardened', () => {
    const lc = fixture({ storage: { size: '5Gi', storageClassName: 'fast' } });
    const sts = validatorStatefulSet(lc, parsedSpec(lc), 'ledger-v1');
    expect(sts.metadata.name).toBe('ledger-v1');
    expect(sts.spec.replicas).toBe(1);
    expect(sts.spec.serviceName).toBe('ledger-v1');
    expect(sts.spec.volumeClaimTemplates[0].spec).toMatchObject({
      storageClassName: 'fast',
      resources: { requests: { storage: '5Gi' } },
    });
    const pod = sts.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 });
    expect(pod.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    expect(pod.terminationGracePeriodSeconds).toBe(15);
    expect(pod.automountServiceAccountToken).toBe(false);
    const c = pod.containers[0];
    expect(c.image).toBe('scriptorium/ledger-node:1.0.0');
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    expect(c.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.resources.requests).toBeDefined();
    // Selector matches the pod labels.
    for (const [k, v] of Object.entries(sts.spec.selector.matchLabels))
      expect(sts.spec.template.metadata.labels[k]).toBe(v);
  });
  it('TLS on: HTTPS probes and the TLS files', () => {
    const lc = fixture({ tls: { mode: 'mutual', caSecretRef: { name: 'my-ca' } } });
    const sts = validatorStatefulSet(lc, parsedSpec(lc), 'ledger-v0');
    const c = sts.spec.template.spec.containers[0];
    expect(c.readinessProbe.httpGet).toMatchObject({ path: '/ready', scheme: 'HTTPS' });
    expect(c.livenessProbe.httpGet).toMatchObject({ path: '/health', scheme: 'HTTPS' });
    const env = Object.fromEntries(c.env.map((e: { name: string; value?: string }) => [e.name, e.value]));
    expect(env).toMatchObject({ NODE_TLS__ENABLED: 'true', NODE_TLS__MODE: 'mutual' });
    expect(sts.spec.template.spec.volumes.map((v: { name: string }) => v.name)).toContain('tls');
  });
  it('TLS disabled: HTTP probes, no TLS env or volume', () => {
    const lc = fixture({ tls: { mode: 'disabled' } });
    const sts = validatorStatefulSet(lc, parsedSpec(lc), 'ledger-v0');
    const c = sts.spec.template.spec.containers[0];
    expect(c.readinessProbe.httpGet.scheme).toBe('HTTP');
    expect(c.env.some((e: { name: string }) => e.name.startsWith('NODE_TLS__'))).toBe(false);
    expect(sts.spec.template.spec.volumes.map((v: { name: string }) => v.name)).not.toContain('tls');
  });
  it('env follows the image contract', () => {
    const lc = fixture({ consensus: { roundTimeoutBaseMs: 750, blockIntervalMs: 1000, maxRecordsPerBlock: 50_000 } });
    const env = validatorEnv(lc, parsedSpec(lc), 'ledger-v3');
    const byName = Object.fromEntries(env.map((e) => [e.name, e]));
    expect(byName.NODE_ID?.value).toBe('ledger-v3');
    expect(byName.NODE_CONSENSUS__ADVERTISE?.value).toBe('ledger-v3.chain.svc:8000');
    expect(byName.NODE_CONSENSUS__ROUND_TIMEOUT_MS?.value).toBe('750');
    expect(byName.NODE_CONSENSUS__MAX_BLOCK_RECORDS?.value).toBe('10000');
    expect(byName.NODE_KEY_FILE?.value).toBe('/etc/ledger-node/key/key.json');
    expect(byName.NODE_GENESIS_FILE?.value).toBe('/etc/ledger-node/genesis/genesis.json');
    expect(byName.NODE_DATA_DIR?.value).toBe('/var/lib/ledger-node/data');
    expect(byName.NODE_CLUSTER_TOKEN_FILE?.value).toBe('/etc/ledger-node/token/token');
    expect(byName.NODE_PEERS?.valueFrom).toEqual({ configMapKeyRef: { name: 'ledger-peers', key: 'peers' } });
    // No secret value is ever inlined in the environment.
    expect(env.some((e) => e.name.includes('TOKEN') && e.value && !e.value.startsWith('/'))).toBe(false);
  });
});

describe("the environment against the node's settings", () => {
  const ext = 'ab'.repeat(32);
  const specs = [
    fixture({ tls: { mode: 'disabled' } }),
    fixture(),
    fixture({
      tls: { mode: 'mutual', caSecretRef: { name: 'my-ca' } },
      consensus: { roundTimeoutBaseMs: 750, blockIntervalMs: 250, maxRecordsPerBlock: 50_000 },
      externalValidators: [{ publicKey: ext, address: 'ledger.partner.example:8000' }],
    }),
    watched,
  ];

  it('sets only variables the node defines', () => {
    for (const lc of specs) {
      const names = validatorEnv(lc, parsedSpec(lc), 'ledger-v0').map((e) => e.name);
      const unknown = names.filter((name) => !NODE_SETTING_NAMES.includes(name));
      expect(unknown, `variables the node does not define: ${unknown.join(', ')}`).toEqual([]);
      expect(new Set(names).size).toBe(names.length);
    }
  });

  it("the node's own loader accepts every environment the operator builds (files and ConfigMaps as mounted)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'operator-env-'));
    try {
      for (const lc of specs) {
        const spec = parsedSpec(lc);
        const validators = [0, 1, 2, 3].map((i) => ({ name: `ledger-v${i}`, publicKey: testKey(i).publicKey }));
        const env: Record<string, string> = {};
        for (const e of validatorEnv(lc, spec, 'ledger-v0') as NodeEnvVar[]) {
          if (e.value !== undefined) env[e.name] = e.value;
          else if (e.name === 'NODE_PEERS') env[e.name] = peerList(lc, spec, validators);
          else throw new Error(`${e.name}: a valueFrom the test does not know how to resolve`);
        }
        // The mounted files, at temp paths: the node reads the token and TLS files at start.
        for (const name of Object.keys(env).filter((n) => n.endsWith('_FILE'))) {
          const file = join(dir, name);
          const secret =
            name === 'NODE_CLUSTER_TOKEN_FILE' || name.endsWith('_SECRET_FILE') || name.endsWith('_TOKEN_FILE');
          writeFileSync(file, secret ? 'a-secret-of-at-least-16-chars' : 'pem');
          env[name] = file;
        }
        const config = loadConfig(env);
        expect(config.nodeId).toBe('ledger-v0');
        expect(config.seedPeers).toHaveLength(spec.externalValidators.length + validators.length);
        expect(config.tls?.mode).toBe(spec.tls.mode === 'disabled' ? undefined : spec.tls.mode);
        expect(config.watcher?.federated.length).toBe(spec.brokers?.federated.length);
        if (spec.brokers) {
          expect(config.watcher?.pollIntervalMs).toBe(spec.brokers.pollIntervalSeconds * 1000);
          expect(config.watcher?.mode).toBe(spec.brokers.mode);
          // Brokers notify the validator at the address it advertises (its Service).
          expect(config.watcher?.notifyUrl).toBe(
            `${spec.tls.mode === 'disabled' ? 'http' : 'https'}://${env.NODE_CONSENSUS__ADVERTISE}`,
          );
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('rollout, one validator at a time', () => {
  const sts = (ready: boolean, settled = true): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'x', generation: 2 },
    status: {
      observedGeneration: 2,
      readyReplicas: ready ? 1 : 0,
      currentRevision: 'a',
      updateRevision: settled ? 'a' : 'b',
    },
  });
  it('updates a healthy validator only when every other one is settled and none is updating', () => {
    const all = new Map([
      ['v0', sts(true)],
      ['v1', sts(true)],
      ['v2', sts(true)],
    ]);
    expect(updateAllowed('v0', all, new Set())).toBe(true);
    expect(updateAllowed('v1', all, new Set(['v0']))).toBe(false);
    expect(updateAllowed('v1', new Map([...all, ['v0', sts(true, false)]]), new Set())).toBe(false);
    expect(updateAllowed('v1', new Map([...all, ['v0', sts(false)]]), new Set())).toBe(false);
  });
  it('always updates a validator that is down (its fix must not wait)', () => {
    const all = new Map([
      ['v0', sts(false)],
      ['v1', sts(false)],
    ]);
    expect(updateAllowed('v0', all, new Set(['v1']))).toBe(true);
    expect(updateAllowed('v2', new Map([['v2', undefined]]), new Set())).toBe(true);
  });
  it('the PodDisruptionBudget allows f = floor((n − 1) / 3) voluntary disruptions, at least 1', () => {
    const lc = fixture();
    expect(podDisruptionBudget(lc, 4).spec.maxUnavailable).toBe(1);
    expect(podDisruptionBudget(lc, 7).spec.maxUnavailable).toBe(2);
    expect(podDisruptionBudget(lc, 1).spec.maxUnavailable).toBe(1);
    expect(podDisruptionBudget(lc, 4).spec.selector.matchLabels).toEqual(clientService(lc).spec.selector);
  });
});

describe('TLS Secret generations and renewal', () => {
  const lc = fixture();
  const dns = ['ledger-v0', 'ledger-v0.chain', 'ledger-v0.chain.svc', 'ledger-v0.chain.svc.cluster.local'];
  const day = 86_400_000;
  const t0 = new Date('2026-01-01T00:00:00Z');
  const secret = (generation: number, days = 365, names = dns) =>
    tlsSecret(lc, 'ledger-v0', { certPem: 'C', keyPem: 'K' }, 'CA', {
      generation,
      notBefore: t0,
      notAfter: new Date(t0.getTime() + days * day),
      dnsNames: names,
    });
  it('names generations <v>-tls, <v>-tls-1, … and picks the newest of a validator', () => {
    expect(tlsSecretName('ledger-v0', 0)).toBe('ledger-v0-tls');
    expect(tlsSecretName('ledger-v0', 2)).toBe('ledger-v0-tls-2');
    const other = tlsSecret(lc, 'ledger-v1', { certPem: 'C', keyPem: 'K' }, 'CA', {
      generation: 7,
      notBefore: t0,
      notAfter: t0,
      dnsNames: [],
    });
    expect(currentTlsSecret([secret(0), secret(2), secret(1), other], 'ledger-v0')?.metadata.name).toBe(
      'ledger-v0-tls-2',
    );
    expect(currentTlsSecret([other], 'ledger-v0')).toBeUndefined();
    expect(secret(1).immutable).toBe(true);
  });
  it('renews in the last third of the lifetime, when not yet valid, or when the DNS names changed', () => {
    expect(tlsRenewalDue(secret(0), new Date(t0.getTime() + 200 * day), dns)).toBe(false);
    expect(tlsRenewalDue(secret(0), new Date(t0.getTime() + 244 * day), dns)).toBe(true);
    expect(tlsRenewalDue(secret(0), new Date(t0.getTime() - day), dns)).toBe(true);
    expect(tlsRenewalDue(secret(0, 365, dns.slice(1)), new Date(t0.getTime() + day), dns)).toBe(true);
    const bare = { ...secret(0), metadata: { ...secret(0).metadata, annotations: {} } };
    expect(tlsRenewalDue(bare, t0, dns)).toBe(true);
  });
  it('the StatefulSet mounts the current generation', () => {
    const tls = fixture({ tls: { mode: 'server' } });
    const sts = validatorStatefulSet(tls, parsedSpec(tls), 'ledger-v0', 'ledger-v0-tls-3');
    const volume = sts.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'tls');
    expect(volume.secret.secretName).toBe('ledger-v0-tls-3');
  });
});
