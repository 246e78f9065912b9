import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { certificateConfig } from './certs.ts';
import { renderKubeconfig } from './kubeconfig.ts';

describe('renderKubeconfig', () => {
  it('is loadable by @kubernetes/client-node with inlined certificates', () => {
    const text = renderKubeconfig({
      server: 'https://127.0.0.1:6443',
      caPem: 'CA',
      certPem: 'CERT',
      keyPem: 'KEY',
      user: 'admin',
    });
    const kc = new KubeConfig();
    kc.loadFromString(text);
    expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
    expect(kc.getCurrentCluster()?.caData).toBe(Buffer.from('CA').toString('base64'));
    expect(kc.getCurrentUser()?.name).toBe('admin');
    expect(kc.getCurrentUser()?.keyData).toBe(Buffer.from('KEY').toString('base64'));
  });
});

describe('renderKubeconfig with a token', () => {
  it('writes a bearer token user and no certificate', () => {
    const kc = new KubeConfig();
    kc.loadFromString(renderKubeconfig({ server: 'https://127.0.0.1:1', caPem: 'CA', token: 'tok', user: 'sa' }));
    expect(kc.getCurrentUser()?.token).toBe('tok');
    expect(kc.getCurrentUser()?.certData).toBeUndefined();
  });
});

describe('certificateConfig', () => {
  it('marks a CA as a CA', () => {
    const text = certificateConfig({ commonName: 'ca', kind: 'ca' });
    expect(text).toContain('basicConstraints = critical,CA:TRUE');
    expect(text).not.toContain('extendedKeyUsage');
  });

  it('gives a server certificate its names and serverAuth', () => {
    const text = certificateConfig({
      commonName: 's',
      kind: 'server',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
    });
    expect(text).toContain('extendedKeyUsage = serverAuth');
    expect(text).toContain('subjectAltName = DNS:localhost,IP:127.0.0.1');
  });

  it('puts the organization (the Kubernetes group) before the common name', () => {
    const text = certificateConfig({ commonName: 'admin', organization: 'system:masters', kind: 'client' });
    expect(text).toMatch(/O = system:masters\nCN = admin/);
    expect(text).toContain('extendedKeyUsage = clientAuth');
  });
});
