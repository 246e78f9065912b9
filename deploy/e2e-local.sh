#!/usr/bin/env bash
# `make e2e-local`: the end-to-end suite (deploy/e2e, vitest project e2e) on this machine's own cluster.
#
#   1. the node binaries (tools/kube/build.sh --node, cached);
#   2. the images (tools/cluster/images.sh): base images once, the project images rebuilt when the
#      hash of their inputs changed, so a fresh clone tests its own code and a rerun rebuilds nothing;
#   3. the cluster (tools/cluster/up.sh, DEMO=0: idempotent; imports the images that changed);
#   4. the suite, KUBECONFIG = the cluster's admin kubeconfig; report .test-results/e2e.json;
#   5. one summary line. The cluster stays up (make cluster-down removes it).
#
# Env: E2E_CNPG (1: CloudNativePG's operator and operand are built and its test runs; 0 leaves them out),
# E2E_WAIT_SECONDS (300, each wait of the suite), E2E_REPORT (.test-results/e2e.json), E2E_PHASE=prepare (steps
# 1–3 only: `.ci/run` starts preparing kind once the local cluster is up). Root only.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source tools/cluster/lib.sh
# shellcheck source=tools/build/lib.sh
source tools/build/lib.sh
report=${E2E_REPORT:-.test-results/e2e.json}
log() { echo "e2e-local: $*" >&2; }
start=$(date +%s)
[[ $(id -u) == 0 ]] || { log "must run as root (the local cluster changes iptables, mounts and sysctls)"; exit 1; }
mkdir -p "$(dirname "$report")"
rm -f "$report"

log "binaries"
step_run e2e-local/binaries bash tools/kube/build.sh --node >/dev/null
log "images (rebuilt when their inputs changed)"
step_run e2e-local/images bash tools/cluster/images.sh >/dev/null
log "cluster"
DEMO=0 step_run e2e-local/cluster bash tools/cluster/up.sh >/dev/null
ready=$(date +%s)
[[ ${E2E_PHASE:-all} != prepare ]] || exit 0

log "suite (KUBECONFIG=$KUBECONFIG_ADMIN)"
# An address outside the machine that no pod may reach (the egress firewall): the host's resolver, as check.sh.
outside=$(awk '$1 == "nameserver" {print $2; exit}' /etc/resolv.conf)
[[ $outside =~ ^[0-9.]+$ ]] || outside=$(ip -4 route show default | awk '{print $3; exit}')
rc=0
# The node is this host: pods reach its address (the watch step's brokers listen there).
E2E_EGRESS_PROBE=$outside:53 E2E_INGRESS=$INGRESS_ADDRESS E2E_HOST_ADDRESS=$NODE_IP KUBECONFIG=$KUBECONFIG_ADMIN SCRIPTORIUM_KUBE_BIN=$KUBE_BIN \
	E2E_POSTGRES_IMAGE=localhost/scriptorium/postgres:15-bookworm E2E_PULL_POLICY=IfNotPresent E2E_CNPG=${E2E_CNPG:-1} \
	step_run e2e-local/suite vitest run --project e2e --reporter=default --reporter=json --outputFile.json="$report" ||
	rc=$?
end=$(date +%s)
summary=$(node tools/test-summary.ts "$report")
log "$summary (cluster and images $((ready - start)) s, suite $((end - ready)) s; the cluster stays up: make cluster-down)"
echo "$summary"
exit "$rc"
