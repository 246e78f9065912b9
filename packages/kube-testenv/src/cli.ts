#!/usr/bin/env node
// Start a test control plane, print its kubeconfig path, and keep it running until SIGINT/SIGTERM
// (with --until-stdin-closes, also until stdin closes, so a parent script that dies takes it down too).
//
//   node packages/kube-testenv/src/cli.ts [--no-controller-manager] [--until-stdin-closes]
//
// First stdout line: `KUBECONFIG=<path>`. Everything else goes to stderr. Used by charts/lint.sh.
import { startTestControlPlane } from './control-plane.ts';

const withControllerManager = !process.argv.includes('--no-controller-manager');

try {
  const plane = await startTestControlPlane({ withControllerManager });
  let stopping = false;
  const shutdown = async (why: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`kube-testenv: stopping (${why})\n`);
    await plane.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  if (process.argv.includes('--until-stdin-closes')) {
    process.stdin.on('end', () => void shutdown('stdin closed'));
    process.stdin.on('error', () => void shutdown('stdin error'));
    process.stdin.resume();
  }
  process.stdout.write(`KUBECONFIG=${plane.kubeconfigPath}\n`);
  process.stderr.write(`kube-testenv: API server ${plane.server} ready; Ctrl-C stops it\n`);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
