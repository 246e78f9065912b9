#!/usr/bin/env bash
# `make e2e-kind`: the end-to-end suite (deploy/e2e, vitest project e2e; the same suite `make e2e-local`
# runs on this machine's own cluster) on a kind cluster.
#
#   1. create a kind cluster;
#   2. build the project's images (the three products and the end-to-end suite's test broker) and `kind load` them;
#   3. the ingress controller (deploy/traefik.yaml: Traefik, IngressClass traefik) on the node whose ports 80/443
#      the kind config maps to the host's 127.0.0.1:8080/8443;
#   4. run the suite with KUBECONFIG = the kind cluster's, E2E_INGRESS = 127.0.0.1:8080 and E2E_HOST_ADDRESS = the
#      gateway of kind's Docker network; report .test-results/e2e.json;
#   5. delete the cluster (KEEP_CLUSTER=1 keeps it).
#
# Two ways, by KIND_OFFLINE (default: 0 on GitHub Actions, 1 elsewhere):
#   0  a Docker engine and registries (GitHub's runners): kind's own node image, deploy/kind-config.yaml (3 nodes),
#      `docker build` + `kind load docker-image`, PostgreSQL and Traefik from Docker Hub;
#   1  no registry (these build machines; root): a Docker engine started by tools/kind/engine.sh, the node image
#      built by tools/kind/node-image.sh, tools/kind/kind-config.yaml (1 node), the images the local cluster
#      builds (tools/cluster/images.sh: the same Dockerfiles, with buildah; Traefik from source): PostgreSQL and
#      Traefik inside the node image, the three project images loaded with `kind load image-archive`.
#
# Env: KIND_CLUSTER (scriptorium-e2e), KIND_NODE_IMAGE (kind's default / the locally built one), IMAGE_TAG (dev),
#      E2E_WAIT_SECONDS (300 per wait), KEEP_CLUSTER=1 keeps the cluster for debugging,
#      E2E_PHASE=prepare: steps 1–3 only, the cluster kept for a later run, which then starts at step 4 (CI prepares
#      kind beside the integration stage: tools/build/prebuild.sh).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
cluster=${KIND_CLUSTER:-scriptorium-e2e}
# One run per cluster name at a time: CI prepares the cluster beside the integration stage (tools/build/prebuild.sh),
# and `make e2e-kind` after it waits for that to end, then finds the cluster prepared. The lock is held by flock
# itself (-o: not by the engine or the cluster this script may start).
[[ -n ${E2E_KIND_LOCKED:-} ]] ||
	E2E_KIND_LOCKED=1 exec flock -o "${TMPDIR:-/tmp}/scriptorium-e2e-kind-$cluster.lock" bash "$root/deploy/e2e-kind.sh" "$@"
tag=${IMAGE_TAG:-dev}
report=${E2E_REPORT:-.test-results/e2e.json}
# Where both kind configs map the ingress controller's node port 80 on the host.
ingress=127.0.0.1:8080

log() { echo "e2e-kind: $*" >&2; }
# shellcheck source=tools/build/lib.sh
source tools/build/lib.sh

offline=${KIND_OFFLINE:-}
[[ -n $offline ]] || { [[ ${GITHUB_ACTIONS:-} == true ]] && offline=0 || offline=1; }
if [[ $offline == 1 ]]; then
	[[ $(id -u) == 0 ]] || { log "KIND_OFFLINE=1 starts a Docker engine and builds images: run as root"; exit 1; }
	step_run e2e-kind/engine bash tools/kind/engine.sh start
	eval "$(bash tools/kind/engine.sh env)"
fi
if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then
	log "no Docker engine answers here (docker info failed). kind runs Kubernetes nodes as containers,"
	log "so this suite needs one: run it on a machine with Docker, or in CI (.github/workflows/e2e-kind.yml);"
	log "on a machine without one, make e2e-local runs the same suite on a local cluster."
	exit 2
fi
if [[ $offline == 1 ]]; then
	bin_dir=${SCRIPTORIUM_KUBE_BIN:-$(bash tools/kube/build.sh --kind)}
	log "node image (tools/kind/node-image.sh)"
	started=$SECONDS
	node_image=${KIND_NODE_IMAGE:-$(bash tools/kind/node-image.sh)}
	step_record e2e-kind/node-image $((SECONDS - started)) ran
else
	bin_dir=${SCRIPTORIUM_KUBE_BIN:-$(bash tools/kube/build.sh)}
	node_image=${KIND_NODE_IMAGE:-}
fi
kind="$bin_dir/kind"
command -v kubectl >/dev/null || [[ -x $bin_dir/kubectl ]] || { log "kubectl not found on PATH"; exit 1; }

phase=${E2E_PHASE:-all}
[[ $phase == all || $phase == prepare ]] || { log "E2E_PHASE is prepare or unset"; exit 2; }
# One folder per cluster name: a prepared cluster's kubeconfig is where the run after it looks.
work=${TMPDIR:-/tmp}/scriptorium-e2e-kind-$cluster
kubeconfig="$work/kubeconfig"
prepared="$work/prepared"
cleanup() {
	local code=$?
	if [[ $phase == prepare && $code == 0 ]]; then
		log "prepared cluster $cluster (KUBECONFIG=$kubeconfig): the next run of this script uses it"
	elif [[ ${KEEP_CLUSTER:-} == 1 ]]; then
		log "keeping cluster $cluster (KUBECONFIG=$kubeconfig); delete it with: $kind delete cluster --name $cluster"
	else
		step_run e2e-kind/delete "$kind" delete cluster --name "$cluster" >/dev/null 2>&1 || true
		rm -rf "$work"
	fi
	exit "$code"
}
trap cleanup EXIT

# A cluster an earlier E2E_PHASE=prepare left, from the same node image and project images, still answering: reuse
# it (steps 1–3 are done).
identity() {
	echo "$cluster ${node_image:-default} $(cat "${SCRIPTORIUM_CACHE:-$HOME/.cache/scriptorium}"/cluster/images/*.stamp 2>/dev/null | sha256sum | cut -c1-16)"
}
reuse=no
if [[ $phase == all && -f $prepared && $(<"$prepared") == "$(identity)" ]] &&
	"$kind" get clusters 2>/dev/null | grep -qx "$cluster" &&
	KUBECONFIG=$kubeconfig "$bin_dir/kubectl" get --raw /readyz >/dev/null 2>&1; then
	reuse=yes
	log "using the prepared cluster $cluster"
fi
rm -f "$prepared"
mkdir -p "$work"

config=deploy/kind-config.yaml
if [[ $offline == 1 ]]; then
	# shellcheck source=tools/kube/versions.env
	source tools/kube/versions.env
	config="$work/kind-config.yaml"
	sed "s/ETCD_VERSION/$ETCD_VERSION/" tools/kind/kind-config.yaml >"$config"
fi
# Steps 1–3: the cluster, the images in it, the ingress controller answering on the host.
prepare_cluster() {
	log "creating kind cluster $cluster${node_image:+ from $node_image}"
	"$kind" delete cluster --name "$cluster" >/dev/null 2>&1 || true
	started=$(date +%s)
	step_run e2e-kind/cluster "$kind" create cluster --name "$cluster" --config "$config" --kubeconfig "$kubeconfig" \
		--wait 300s ${node_image:+--image "$node_image"}
	log "kind cluster up in $(($(date +%s) - started)) s"

	if [[ $offline == 1 ]]; then
		[[ $tag == dev ]] || { log "KIND_OFFLINE=1 loads the images tools/cluster/images.sh builds (tag dev)"; exit 1; }
		log "images (tools/cluster/images.sh, rebuilt when their inputs changed) into the kind node"
		load_images() {
			local name
			bash tools/cluster/images.sh >/dev/null
			# PostgreSQL and Traefik are in the node image (tools/kind/node-image.sh).
			for name in operator translation ledger-node; do
				"$kind" load image-archive "${SCRIPTORIUM_CACHE:-$HOME/.cache/scriptorium}/cluster/images/$name.oci.tar" --name "$cluster"
			done
		}
		step_run e2e-kind/images load_images
	else
		log "building and loading images (tag $tag)"
		for image in operator:operator/Dockerfile translation:services/translation/Dockerfile \
			ledger-node:services/ledger-node/Dockerfile; do
			name=${image%%:*} dockerfile=${image#*:}
			docker build -f "$dockerfile" -t "scriptorium/$name:$tag" .
			"$kind" load docker-image "scriptorium/$name:$tag" --name "$cluster"
		done
	fi

	# The ingress controller: upstream's image where registries answer, else the same version built from source.
	source tools/kube/versions.env
	traefik_manifest=$(<deploy/traefik.yaml)
	upstream_traefik="docker.io/library/traefik:$TRAEFIK_VERSION"
	[[ $traefik_manifest == *"image: $upstream_traefik"* ]] ||
		{ log "deploy/traefik.yaml does not name $upstream_traefik (TRAEFIK_VERSION in tools/kube/versions.env)"; exit 1; }
	if [[ $offline == 1 ]]; then
		traefik_manifest=${traefik_manifest//"image: $upstream_traefik"/"image: localhost/scriptorium/traefik:$TRAEFIK_VERSION"}
	fi
	kubectl_bin=$bin_dir/kubectl
	[[ -x $kubectl_bin ]] || kubectl_bin=kubectl
	kc() { KUBECONFIG=$kubeconfig "$kubectl_bin" "$@"; }
	log "ingress controller (deploy/traefik.yaml) on the host's $ingress"
	started=$SECONDS
	kc apply -f - <<<"$traefik_manifest" >/dev/null
	kc -n traefik rollout status deployment/traefik --timeout=300s >/dev/null
	for ((i = 0; ; i++)); do
		# The controller answers on the host, with its own 404 for a host no Ingress names.
		[[ $(curl -s -o /dev/null -w '%{http_code}' -H 'Host: e2e-kind.invalid' "http://$ingress/") == 404 ]] && break
		((i < 60)) || { log "the ingress controller does not answer on http://$ingress"; exit 1; }
		sleep 1
	done
	step_record e2e-kind/ingress $((SECONDS - started)) ran
}
postgres_image=
[[ $offline != 1 ]] || postgres_image=localhost/scriptorium/postgres:15-bookworm
[[ $reuse == yes ]] || prepare_cluster
if [[ $phase == prepare ]]; then
	identity >"$prepared"
	exit 0
fi

log "suite"
mkdir -p "$(dirname "$report")"
rm -f "$report"
rc=0
[[ -z $postgres_image ]] || export E2E_POSTGRES_IMAGE=$postgres_image
# This host as kind's pods reach it: the gateway of the nodes' Docker network (the watch step's brokers listen there).
host_address=$(docker network inspect kind --format '{{range .IPAM.Config}}{{.Gateway}} {{end}}' | tr ' ' '\n' |
	grep -E '^[0-9]+(\.[0-9]+){3}$' | head -1) || true
[[ -n $host_address ]] || { log "no IPv4 gateway on the kind Docker network (docker network inspect kind)"; exit 1; }
export E2E_HOST_ADDRESS=$host_address
E2E_INGRESS=$ingress KUBECONFIG=$kubeconfig SCRIPTORIUM_KUBE_BIN=$bin_dir E2E_IMAGE_TAG=$tag E2E_PULL_POLICY=IfNotPresent \
	step_run e2e-kind/suite vitest run --project e2e --reporter=default --reporter=json --outputFile.json="$report" ||
	rc=$?
summary=$(node tools/test-summary.ts "$report")
log "$summary"
echo "$summary"
exit "$rc"
