/** One user of a kubeconfig: a client certificate and key (PEM text), or a bearer token. */
export type KubeconfigInput = {
  server: string;
  caPem: string;
  user: string;
  context?: string;
} & ({ certPem: string; keyPem: string } | { token: string });

const b64 = (text: string) => Buffer.from(text).toString('base64');

/**
 * A self-contained kubeconfig (certificates inlined), usable by kubectl, helm and @kubernetes/client-node.
 * JSON is valid YAML, so no YAML library is needed.
 *
 * @example renderKubeconfig({ server: 'https://127.0.0.1:6443', caPem, certPem, keyPem, user: 'admin' })
 */
export function renderKubeconfig(input: KubeconfigInput): string {
  const context = input.context ?? 'scriptorium-test';
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: context, cluster: { server: input.server, 'certificate-authority-data': b64(input.caPem) } }],
    users: [
      {
        name: input.user,
        user:
          'token' in input
            ? { token: input.token }
            : { 'client-certificate-data': b64(input.certPem), 'client-key-data': b64(input.keyPem) },
      },
    ],
    contexts: [{ name: context, context: { cluster: context, user: input.user, namespace: 'default' } }],
    'current-context': context,
    preferences: {},
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
