#!/usr/bin/env bash
# `make e2e-kind`: the end-to-end suite on a kind cluster. Needs a Docker engine (GitHub Actions'
# ubuntu runners have one; these build machines do not).
#
#   1. create a kind cluster (deploy/kind-config.yaml);
#   2. build the three images and `kind load` them;
#   3. install the CRDs and the chart, and a throwaway PostgreSQL;
#   4. apply deploy/samples/*, wait until both resources are Ready;
#   5. call the translation API through a port-forward, read the ledger's status;
#   6. delete the resources (owned objects must be garbage-collected), uninstall, delete the cluster.
#
# Env: KIND_CLUSTER (scriptorium-e2e), KIND_NODE_IMAGE (kind's default), IMAGE_TAG (dev),
#      KEEP_CLUSTER=1 keeps the cluster for debugging, E2E_TIMEOUT (600s per wait).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
cluster=${KIND_CLUSTER:-scriptorium-e2e}
tag=${IMAGE_TAG:-dev}
timeout=${E2E_TIMEOUT:-600s}
ops_ns=scriptorium-system
ns=scriptorium-demo
port_forward_pid=

log() { echo "e2e-kind: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then
	log "no Docker engine answers here (docker info failed). kind runs Kubernetes nodes as containers,"
	log "so this suite needs one: run it on a machine with Docker, or in CI (.github/workflows/e2e-kind.yml)."
	exit 2
fi
command -v kubectl >/dev/null || fail "kubectl not found on PATH"
bin_dir=${SCRIPTORIUM_KUBE_BIN:-$(bash tools/kube/build.sh)}
kind="$bin_dir/kind"
helm="$bin_dir/helm"

work=$(mktemp -d)
kubeconfig="$work/kubeconfig"
export KUBECONFIG=$kubeconfig

diagnose() {
	log "diagnostics:"
	kubectl get nodes -o wide || true
	kubectl get translationservices,ledgerclusters -A -o wide || true
	kubectl -n "$ns" get all,jobs,cronjobs,secrets,configmaps,pvc -o wide || true
	kubectl get events -A --sort-by=.lastTimestamp | tail -60 || true
	kubectl -n "$ops_ns" logs deployment/scriptorium-scriptorium-operator --tail=200 || true
	kubectl -n "$ns" describe translationservice translation || true
	kubectl -n "$ns" describe ledgercluster ledger || true
}

cleanup() {
	local code=$?
	[[ -z $port_forward_pid ]] || kill "$port_forward_pid" 2>/dev/null || true
	if ((code != 0)); then diagnose; fi
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
	[[ -f $dockerfile ]] || fail "$dockerfile is missing"
	docker build -f "$dockerfile" -t "scriptorium/$name:$tag" .
	"$kind" load docker-image "scriptorium/$name:$tag" --name "$cluster"
done

log "installing the CRDs and the chart"
kubectl apply --server-side -f crds/
kubectl wait --for=condition=Established --timeout=60s crd/translationservices.scriptorium.dev crd/ledgerclusters.scriptorium.dev
"$helm" upgrade --install scriptorium charts/scriptorium-operator --namespace "$ops_ns" --create-namespace \
	--set image.tag="$tag" --set image.pullPolicy=Never --set replicaCount=2 --wait --timeout "$timeout"
leader=
for _ in $(seq 1 60); do
	leader=$(kubectl -n "$ops_ns" get lease scriptorium-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true)
	[[ -z $leader ]] || break
	sleep 1
done
[[ -n $leader ]] || fail "no operator replica took the leader-election Lease within 60 s"
log "leader: $leader"

log "installing PostgreSQL"
kubectl create namespace "$ns"
kubectl -n "$ns" apply -f deploy/postgres.yaml
kubectl -n "$ns" rollout status statefulset/postgres --timeout "$timeout"

log "applying the samples"
# The samples name the :dev images; use the tag just built.
sed "s#scriptorium/translation:dev#scriptorium/translation:$tag#" deploy/samples/translation-service.yaml | kubectl -n "$ns" apply -f -
sed "s#scriptorium/ledger-node:dev#scriptorium/ledger-node:$tag#" deploy/samples/ledger-cluster.yaml | kubectl -n "$ns" apply -f -

# A bad spec is refused by the API server (CEL validation in the CRD) with a readable message.
if kubectl -n "$ns" patch ledgercluster ledger --type=merge -p '{"spec":{"genesis":{"chainId":"other"}}}' 2>"$work/refusal.txt"; then
	fail "the API server accepted a change of an immutable genesis"
fi
grep -q 'genesis is immutable' "$work/refusal.txt" || fail "unexpected refusal: $(cat "$work/refusal.txt")"

log "waiting for Ready"
kubectl -n "$ns" wait --for=condition=Ready translationservice/translation --timeout "$timeout"
kubectl -n "$ns" wait --for=condition=Ready ledgercluster/ledger --timeout "$timeout"
kubectl -n "$ns" get translationservices,ledgerclusters -o wide

log "calling the translation API"
local_port=18080
kubectl -n "$ns" port-forward service/translation "$local_port:80" >/dev/null 2>&1 &
port_forward_pid=$!
for _ in $(seq 1 60); do
	curl -fsS "http://127.0.0.1:$local_port/readyz" >/dev/null 2>&1 && break
	sleep 1
done
curl -fsS "http://127.0.0.1:$local_port/readyz" >/dev/null || fail "translation /readyz did not answer through the port-forward"
response=$(curl -fsS -X POST "http://127.0.0.1:$local_port/api/v1/playground" -H 'content-type: application/json' \
	-d '{"source":"Hello {name}, you have {count, plural, one {# file} other {# files}}.","sourceLocale":"en","targetLocale":"fr"}') ||
	fail "POST /api/v1/playground failed"
log "playground answered: $response"
grep -q '{name}' <<<"$response" || fail "the pseudo translation lost the ICU argument {name}"
status=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$local_port/api/v1/translate" \
	-H 'content-type: application/json' \
	-d '{"sourceLocale":"en","targetLocale":"fr","tier":"cheap","items":[{"id":"a","text":"Hi"}],"style":{},"glossary":[]}')
[[ $status == 401 ]] || fail "POST /api/v1/translate without an API key answered $status, expected 401"

log "checking the ledger"
quorum=$(kubectl -n "$ns" get ledgercluster ledger -o jsonpath='{.status.quorum}')
active=$(kubectl -n "$ns" get ledgercluster ledger -o jsonpath='{.status.activeValidators}')
[[ $active == 4 && $quorum == 3 ]] || fail "ledger status: activeValidators=$active quorum=$quorum (want 4 and 3)"
height=$(kubectl -n "$ns" get ledgercluster ledger -o jsonpath='{.status.height}')
log "ledger height $height, 4 validators, quorum 3"

log "deleting the resources"
kubectl -n "$ns" delete translationservice translation --wait --timeout "$timeout"
kubectl -n "$ns" delete ledgercluster ledger --wait --timeout "$timeout"
for _ in $(seq 1 60); do
	left=$(kubectl -n "$ns" get deployments,statefulsets,cronjobs -l app.kubernetes.io/managed-by=scriptorium-operator -o name | wc -l)
	((left == 0)) && break
	sleep 2
done
((left == 0)) || fail "owned workloads were not garbage-collected: $(kubectl -n "$ns" get deployments,statefulsets,cronjobs -o name)"
"$helm" uninstall scriptorium --namespace "$ops_ns" --wait --timeout "$timeout"
kubectl delete namespace "$ns" --wait --timeout "$timeout"

log "ok"
