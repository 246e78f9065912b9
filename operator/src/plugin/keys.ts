// `kubectl scriptorium keys create TRANSLATIONSERVICE [CLI options]`: an API key made by the translation image's own
// CLI inside one of the TranslationService's API pods (`kubectl exec deployment/<name> -- <entrypoint> keys create
// …`), the same path as running the CLI by hand: its DATABASE_URL and settings are the pod's, and the key is printed
// once, by the CLI, straight to this terminal (never through the API server's objects or a log).

/** The translation image's ENTRYPOINT (services/translation/Dockerfile): its CLI. */
export const TRANSLATION_CLI = ['node', 'services/translation/src/main.ts'];

/** The kubectl arguments that run `keys create` in the service's Deployment (pure). */
export function keysCreateArgs(
  namespace: string,
  service: string,
  cliArgs: string[],
  kube: { kubeconfig?: string; context?: string } = {},
): string[] {
  return [
    ...(kube.kubeconfig ? ['--kubeconfig', kube.kubeconfig] : []),
    ...(kube.context ? ['--context', kube.context] : []),
    '-n',
    namespace,
    'exec',
    `deployment/${service}`,
    '--',
    ...TRANSLATION_CLI,
    'keys',
    'create',
    ...cliArgs,
  ];
}
