#!/usr/bin/env bash
# `make e2e-kind`: the end-to-end suite (deploy/e2e, vitest project e2e; the same suite `make e2e-local`
# runs on this machine's own cluster) on a kind cluster. Needs a Docker engine (GitHub Actions' ubuntu
# runners have one; these build machines do not).
#
#   1. create a kind cluster (deploy/kind-config.yaml);
#   2. build the three images with docker and `kind load` them;
#   3. run the suite with KUBECONFIG = the kind cluster's; report .test-results/e2e.json;
#   4. delete the cluster (KEEP_CLUSTER=1 keeps it).
#
# Env: KIND_CLUSTER (scriptorium-e2e), KIND_NODE_IMAGE (kind's default), IMAGE_TAG (dev),
#      E2E_WAIT_SECONDS (300 per wait), KEEP_CLUSTER=1 keeps the cluster for debugging.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
cluster=${KIND_CLUSTER:-scriptorium-e2e}
tag=${IMAGE_TAG:-dev}
report=${E2E_REPORT:-.test-results/e2e.json}

log() { echo "e2e-kind: $*" >&2; }

if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then
	log "no Docker engine answers here (docker info failed). kind runs Kubernetes nodes as containers,"
	log "so this suite needs one: run it on a machine with Docker, or in CI (.github/workflows/e2e-kind.yml);"
	log "on a machine without one, make e2e-local runs the same suite on a local cluster."
	exit 2
fi
bin_dir=${SCRIPTORIUM_KUBE_BIN:-$(bash tools/kube/build.sh)}
kind="$bin_dir/kind"
command -v kubectl >/dev/null || [[ -x $bin_dir/kubectl ]] || { log "kubectl not found on PATH"; exit 1; }

work=$(mktemp -d)
kubeconfig="$work/kubeconfig"
cleanup() {
	local code=$?
	if [[ ${KEEP_CLUSTER:-} == 1 ]]; then
		log "keeping cluster $cluster (KUBECONFIG=$kubeconfig); delete it with: $kind delete cluster --name $cluster"
	else
		"$kind" delete cluster --name "$cluster" >/dev/null 2>&1 || true
		rm -rf "$work"
	fi
	exit "$code"
}
trap cleanup EXIT

log "creating kind cluster $cluster"
"$kind" delete cluster --name "$cluster" >/dev/null 2>&1 || true
"$kind" create cluster --name "$cluster" --config deploy/kind-config.yaml --kubeconfig "$kubeconfig" \
	--wait 180s ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"}

log "building and loading images (tag $tag)"
for image in operator:operator/Dockerfile translation:services/translation/Dockerfile ledger-node:services/ledger-node/Dockerfile; do
	name=${image%%:*} dockerfile=${image#*:}
	docker build -f "$dockerfile" -t "scriptorium/$name:$tag" .
	"$kind" load docker-image "scriptorium/$name:$tag" --name "$cluster"
done

log "suite"
mkdir -p "$(dirname "$report")"
rm -f "$report"
rc=0
KUBECONFIG=$kubeconfig SCRIPTORIUM_KUBE_BIN=$bin_dir E2E_IMAGE_TAG=$tag E2E_PULL_POLICY=IfNotPresent \
	vitest run --project e2e --reporter=default --reporter=json --outputFile.json="$report" || rc=$?
summary=$(node tools/test-summary.ts "$report")
log "$summary"
echo "$summary"
exit "$rc"
