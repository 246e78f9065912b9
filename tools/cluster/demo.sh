#!/usr/bin/env bash
# The demo `make cluster-up` deploys on the local cluster (skip it with DEMO=0): the operator chart as
# release `scriptorium` in scriptorium-system, watching only scriptorium-demo; in scriptorium-demo,
# deploy/postgres.yaml and the two samples (TranslationService, 4-validator LedgerCluster). Idempotent
# (helm upgrade --install, kubectl apply). Waits, bounded, until the TranslationService is Ready and, when
# the operator reconciles LedgerClusters, the four validators run; then prints `kubectl get pods -A`.
#
# Because it watches one namespace, this operator never reconciles the end-to-end suite's objects (each
# suite run installs its own release, watching its own namespace); the ClusterRole and ClusterRoleBinding
# are named after the release, so the two releases never share a cluster-scoped object either.
#
# deploy/postgres.yaml names docker.io/library/postgres:17-alpine, which cannot be pulled here; it is
# applied with the image replaced by localhost/scriptorium/postgres:15-bookworm (images.sh), which
# honours the same variables and uid. The file itself is unchanged.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
repo=$(cd "$cluster_here/../.." && pwd)
k() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
ops_ns=scriptorium-system
ns=${SCRIPTORIUM_DEMO_NAMESPACE:-scriptorium-demo}
wait_s=${DEMO_WAIT_SECONDS:-300}

for i in operator translation ledger-node; do
	[[ -f $IMAGES/$i.oci.tar ]] || die "demo: no $IMAGES/$i.oci.tar: run bash tools/cluster/images.sh"
done

k apply --server-side --force-conflicts -f "$repo/crds" >/dev/null
"$KUBE_BIN/helm" --kubeconfig "$KUBECONFIG_ADMIN" upgrade --install scriptorium "$repo/charts/scriptorium-operator" \
	-n "$ops_ns" --create-namespace --set image.tag=dev --set image.pullPolicy=IfNotPresent \
	--set operator.watchNamespace="$ns" --wait --timeout "${wait_s}s" >/dev/null
clog "demo: operator release scriptorium in $ops_ns (watching $ns) ready"

k create namespace "$ns" --dry-run=client -o yaml | k apply -f - >/dev/null
sed 's#docker.io/library/postgres:17-alpine#localhost/scriptorium/postgres:15-bookworm#' "$repo/deploy/postgres.yaml" |
	k -n "$ns" apply -f - >/dev/null
k -n "$ns" apply -f "$repo/deploy/samples/translation-service.yaml" -f "$repo/deploy/samples/ledger-cluster.yaml" >/dev/null
k -n "$ns" wait --for=condition=Ready translationservice/translation --timeout="${wait_s}s" >/dev/null ||
	die "demo: the TranslationService is not Ready after ${wait_s}s (kubectl -n $ns describe translationservice translation)"
clog "demo: TranslationService translation Ready"

# The validators exist once the operator reconciles LedgerClusters (its ClusterRole grants StatefulSets).
if k get clusterrole scriptorium-scriptorium-operator -o jsonpath='{.rules[*].resources}' | grep -qw statefulsets; then
	selector=app.kubernetes.io/component=validator,scriptorium.dev/ledger-cluster=ledger
	running=0
	for ((i = 0; i < wait_s / 3; i++)); do
		running=$(k -n "$ns" get pods -l "$selector" --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l)
		((running >= 4)) && break
		sleep 3
	done
	((running >= 4)) || die "demo: $running of 4 validators Running after ${wait_s}s (kubectl -n $ns describe ledgercluster ledger)"
	clog "demo: LedgerCluster ledger: 4 validators Running"
else
	clog "demo: this operator has no LedgerCluster reconciler yet: the LedgerCluster sample is accepted but not run"
fi
k get pods -A >&2
