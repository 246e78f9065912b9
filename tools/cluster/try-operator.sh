#!/usr/bin/env bash
# On a running local cluster (make cluster-up): install the operator chart with the locally built
# image, then deploy/postgres.yaml and the sample TranslationService, wait until it is Ready and
# call its /readyz through the Service. The first slice of the end-to-end suite on this cluster.
#
#   bash tools/cluster/images.sh && make cluster-up && bash tools/cluster/try-operator.sh
#
# deploy/postgres.yaml names docker.io/library/postgres:17-alpine, which cannot be pulled here; it is
# applied with the image replaced by localhost/scriptorium/postgres:15-bookworm (images.sh), which
# honours the same variables and uid. The file itself is unchanged.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
repo=$(cd "$cluster_here/../.." && pwd)
k() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
ns=${SCRIPTORIUM_DEMO_NAMESPACE:-scriptorium-demo}

for i in operator translation; do
	[[ -f $IMAGES/$i.oci.tar ]] || die "no $IMAGES/$i.oci.tar: run bash tools/cluster/images.sh"
done
# Imports any image archive newer than its last import (and is a no-op otherwise).
bash "$cluster_here/up.sh" >/dev/null

"$KUBE_BIN/helm" --kubeconfig "$KUBECONFIG_ADMIN" upgrade --install scriptorium-operator "$repo/charts/scriptorium-operator" \
	-n scriptorium-system --create-namespace --set image.tag=dev --set image.pullPolicy=IfNotPresent \
	--wait --timeout 180s >/dev/null
clog "operator chart installed: $(k -n scriptorium-system get deploy scriptorium-operator -o jsonpath='{.status.readyReplicas}') ready"

k create namespace "$ns" --dry-run=client -o yaml | k apply -f - >/dev/null
sed 's#docker.io/library/postgres:17-alpine#localhost/scriptorium/postgres:15-bookworm#' "$repo/deploy/postgres.yaml" |
	k -n "$ns" apply -f - >/dev/null
k -n "$ns" rollout status statefulset/postgres --timeout=180s >/dev/null
clog "postgres ready"
k -n "$ns" apply -f "$repo/deploy/samples/translation-service.yaml" >/dev/null
k -n "$ns" wait --for=condition=Ready translationservice/translation --timeout=300s >/dev/null
k -n "$ns" get translationservice translation
ip=$(k -n "$ns" get service translation -o jsonpath='{.spec.clusterIP}')
port=$(k -n "$ns" get service translation -o jsonpath='{.spec.ports[0].port}')
body=$(curl -fsS -m 10 "http://$ip:$port/readyz") || die "GET http://$ip:$port/readyz failed"
clog "translation ready through its Service: $body"
