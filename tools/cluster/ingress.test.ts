// The ingress controller of the test clusters is named in several files that must agree: its manifest
// (deploy/traefik.yaml), the version built from source (tools/kube/versions.env), the local cluster's address
// (tools/cluster/lib.sh), both kind configs and deploy/e2e-kind.sh, and the suite's default IngressClass.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { E2eConfigError, loadConfig, repoRoot } from '../../deploy/e2e/config.ts';

const read = (file: string) => readFileSync(join(repoRoot, file), 'utf8');
const docs = parseAllDocuments(read('deploy/traefik.yaml')).map((d) => d.toJS()) as {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}[];
const byKind = (kind: string) => {
  const found = docs.filter((d) => d.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
};

interface Container {
  image: string;
  args: string[];
  ports: { name: string; containerPort: number; hostPort?: number }[];
  securityContext: Record<string, unknown>;
}
const deployment = byKind('Deployment') as unknown as {
  spec: {
    template: {
      spec: { nodeSelector: Record<string, string>; securityContext: Record<string, unknown>; containers: Container[] };
    };
  };
};
const pod = deployment.spec.template.spec;
const traefik = pod.containers[0]!;
const arg = (name: string) =>
  traefik.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ??
  expect.fail(`deploy/traefik.yaml: no --${name}`);
const hostPort = (name: string) => traefik.ports.find((p) => p.name === name)?.hostPort;
const shellValue = (file: string, name: string) =>
  new RegExp(`^${name}=(\\S+)$`, 'm').exec(read(file))?.[1] ?? expect.fail(`${file}: no ${name}=`);

describe('the ingress controller of the test clusters', () => {
  it('runs the Traefik version that tools/kube/build.sh builds', () => {
    const version = shellValue('tools/kube/versions.env', 'TRAEFIK_VERSION');
    expect(version).toMatch(/^v3\.\d+\.\d+$/);
    expect(traefik.image).toBe(`docker.io/library/traefik:${version}`);
  });

  it("serves the default IngressClass, whose name the suite's Ingresses use", () => {
    const ingressClass = byKind('IngressClass');
    expect(ingressClass.spec.controller).toBe('traefik.io/ingress-controller');
    expect(ingressClass.metadata.annotations?.['ingressclass.kubernetes.io/is-default-class']).toBe('true');
    expect(arg('providers.kubernetesingress.ingressclass')).toBe(ingressClass.metadata.name);
    const config = loadConfig({
      KUBECONFIG: join(repoRoot, 'package.json'),
      E2E_INGRESS: '127.0.0.1:80',
      E2E_HOST_ADDRESS: '192.0.2.2',
    });
    expect(config.ingress.className).toBe(ingressClass.metadata.name);
  });

  it('listens where the local cluster and both kind configs expect it, on the node they label', () => {
    const web = traefik.ports.find((p) => p.name === 'web');
    expect(web?.containerPort).toBe(Number(arg('entrypoints.web.address').replace(':', '')));
    expect(shellValue('tools/cluster/lib.sh', 'INGRESS_ADDRESS')).toBe(`127.0.0.1:${hostPort('web')}`);
    const kindAddress = shellValue('deploy/e2e-kind.sh', 'ingress');
    for (const file of ['tools/kind/kind-config.yaml', 'deploy/kind-config.yaml']) {
      const cluster = parseAllDocuments(read(file))[0]!.toJS() as {
        nodes: {
          kubeadmConfigPatches?: string[];
          extraPortMappings?: { containerPort: number; hostPort: number; listenAddress: string }[];
        }[];
      };
      const first = cluster.nodes[0]!;
      const http = first.extraPortMappings?.find((m) => m.containerPort === hostPort('web'));
      expect(`${http?.listenAddress}:${http?.hostPort}`, file).toBe(kindAddress);
      expect(
        first.extraPortMappings?.some((m) => m.containerPort === hostPort('websecure')),
        file,
      ).toBe(true);
      expect(first.kubeadmConfigPatches?.join('\n'), file).toMatch(/node-labels: "ingress-ready=true"/);
    }
    expect(pod.nodeSelector).toEqual({ 'ingress-ready': 'true' });
  });

  it('matches pathType Prefix by whole path segments, as the Ingress API defines it (the LedgerCluster allow-list)', () => {
    expect(arg('providers.kubernetesingress.strictprefixmatching')).toBe('true');
  });

  it('runs unprivileged, logs no requests and calls nowhere', () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(traefik.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(traefik.args.some((a) => a.startsWith('--accesslog'))).toBe(false);
    expect(traefik.args.some((a) => a.startsWith('--api'))).toBe(false);
    expect(arg('global.checknewversion')).toBe('false');
    expect(arg('global.sendanonymoususage')).toBe('false');
  });
});

describe('the suite’s ingress settings (deploy/e2e/config.ts)', () => {
  const base = { KUBECONFIG: join(repoRoot, 'package.json'), E2E_HOST_ADDRESS: '192.0.2.2' };
  it('needs E2E_INGRESS, as host:port', () => {
    expect(() => loadConfig(base)).toThrow(E2eConfigError);
    expect(() => loadConfig(base)).toThrow(/E2E_INGRESS: required/);
    for (const bad of ['127.0.0.1', ':80', '127.0.0.1:0', '127.0.0.1:70000', 'http://127.0.0.1:80']) {
      expect(() => loadConfig({ ...base, E2E_INGRESS: bad }), bad).toThrow(/E2E_INGRESS: expected <host>:<port>/);
    }
    expect(loadConfig({ ...base, E2E_INGRESS: 'localhost:8080' }).ingress.address).toEqual({
      host: 'localhost',
      port: 8080,
    });
  });

  it("needs E2E_HOST_ADDRESS, the host's IPv4 address as pods reach it (where the watch step's brokers listen)", () => {
    const ingress = { KUBECONFIG: base.KUBECONFIG, E2E_INGRESS: '127.0.0.1:80' };
    expect(() => loadConfig(ingress)).toThrow(/E2E_HOST_ADDRESS: expected this host's IPv4 address/);
    for (const bad of ['localhost', '192.0.2', '::1', '192.0.2.2:80']) {
      expect(() => loadConfig({ ...ingress, E2E_HOST_ADDRESS: bad }), bad).toThrow(/E2E_HOST_ADDRESS/);
    }
    expect(loadConfig({ ...ingress, E2E_HOST_ADDRESS: '172.18.0.1' }).hostAddress).toBe('172.18.0.1');
  });

  it('takes another IngressClass by name', () => {
    const config = loadConfig({ ...base, E2E_INGRESS: '127.0.0.1:80', E2E_INGRESS_CLASS: 'nginx' });
    expect(config.ingress.className).toBe('nginx');
    expect(() => loadConfig({ ...base, E2E_INGRESS: '127.0.0.1:80', E2E_INGRESS_CLASS: 'Not A Name' })).toThrow(
      /E2E_INGRESS_CLASS/,
    );
  });
});
