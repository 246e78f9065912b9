#!/usr/bin/env bash
# `make e2e-kind`: the end-to-end suite on a kind cluster. Needs a Docker engine (GitHub Actions'
# ubuntu runners have one; these build machines do not).
#
#   1. create a kind cluster (deploy/kind-config.yaml);
#   2. build the three images and `kind load` them;
#   3. install ingress-nginx (kind's provider manifest), the CRDs and the chart, and a throwaway PostgreSQL;
#   4. apply deploy/samples/* (the TranslationService with an Ingress), wait until it is Ready;
#   5. call the translation API through the ingress (host port 8080 of the kind config);
#      the LedgerCluster sample is checked for CEL validation only, until its reconciler lands;
#   6. delete the resources (owned objects must be garbage-collected), uninstall, delete the cluster.
#
# Env: KIND_CLUSTER (scriptorium-e2e), KIND_NODE_IMAGE (kind's default), IMAGE_TAG (dev),
#      INGRESS_NGINX_MANIFEST (kind's ingress-nginx deployment manifest),
#      KEEP_CLUSTER=1 keeps the cluster for debugging, E2E_TIMEOUT (600s per wait).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
cluster=${KIND_CLUSTER:-scriptorium-e2e}
tag=${IMAGE_TAG:-dev}
timeout=${E2E_TIMEOUT:-600s}
ops_ns=scriptorium-system
ns=scriptorium-demo
ingress_manifest=${INGRESS_NGINX_MANIFEST:-https://kind.sigs.k8s.io/examples/ingress/deploy-ingress-nginx.yaml}
ingress_host=translation.localtest.me

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

log "installing ingress-nginx"
kubectl apply -f "$ingress_manifest"
kubectl -n ingress-nginx wait --for=condition=Ready pod -l app.kubernetes.io/component=controller --timeout "$timeout"

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
# The samples name the :dev images; use the tag just built, and expose the API through ingress-nginx.
sed "s#scriptorium/translation:dev#scriptorium/translation:$tag#" deploy/samples/translation-service.yaml | kubectl -n "$ns" apply -f -
kubectl -n "$ns" patch translationservice translation --type=merge \
	-p "{\"spec\":{\"ingress\":{\"host\":\"$ingress_host\",\"className\":\"nginx\"}}}"
sed "s#scriptorium/ledger-node:dev#scriptorium/ledger-node:$tag#" deploy/samples/ledger-cluster.yaml | kubectl -n "$ns" apply -f -

# A bad spec is refused by the API server (CEL validation in the CRD) with a readable message.
if kubectl -n "$ns" patch ledgercluster ledger --type=merge -p '{"spec":{"genesis":{"chainId":"other"}}}' 2>"$work/refusal.txt"; then
	fail "the API server accepted a change of an immutable genesis"
fi
grep -q 'genesis is immutable' "$work/refusal.txt" || fail "unexpected refusal: $(cat "$work/refusal.txt")"

log "waiting for Ready"
kubectl -n "$ns" wait --for=condition=Ready translationservice/translation --timeout "$timeout"
kubectl -n "$ns" get translationservices,ledgerclusters -o wide

log "calling the translation API through the ingress"
api=(-H "Host: $ingress_host")
base=http://127.0.0.1:8080
for _ in $(seq 1 90); do
	curl -fsS "${api[@]}" "$base/readyz" >/dev/null 2>&1 && break
	sleep 2
done
curl -fsS "${api[@]}" "$base/readyz" >/dev/null || fail "translation /readyz did not answer through the ingress"
response=$(curl -fsS "${api[@]}" -X POST "$base/api/v1/playground" -H 'content-type: application/json' \
	-d '{"source":"Hello {name}, you have {count, plural, one {# file} other {# files}}.","sourceLocale":"en","targetLocale":"fr"}') ||
	fail "POST /api/v1/playground failed"
log "playground answered: $response"
grep -q '{name}' <<<"$response" || fail "the pseudo translation lost the ICU argument {name}"
status=$(curl -s -o /dev/null -w '%{http_code}' "${api[@]}" -X POST "$base/api/v1/translate" \
	-H 'content-type: application/json' \
	-d '{"sourceLocale":"en","targetLocale":"fr","tier":"cheap","items":[{"id":"a","text":"Hi"}],"style":{},"glossary":[]}')
[[ $status == 401 ]] || fail "POST /api/v1/translate without an API key answered $status, expected 401"

# The LedgerCluster reconciler is separate work: when it lands, wait here for Ready and check
# .status.activeValidators == 4, .status.quorum == 3 and a growing .status.height.

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
