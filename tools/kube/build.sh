#!/usr/bin/env bash
# Build (or reuse) the Kubernetes pieces the tests and the chart check need, and print the bin dir.
#
#   bash tools/kube/build.sh            # `make kube-bins`
#   bash tools/kube/build.sh --node     # also kubelet, kube-scheduler, kube-proxy, kubectl, coredns, traefik (tools/cluster)
#   bash tools/kube/build.sh --kind     # --node and kubeadm (tools/kind: kind's node image)
#   SCRIPTORIUM_KUBE_JOBS=4 bash tools/kube/build.sh
#
# Output: $SCRIPTORIUM_CACHE/kube/$KUBE_VERSION/bin/{etcd,kube-apiserver,kube-controller-manager,helm,kind,weed}
# (weed: SeaweedFS, the S3 server of the backup tests) and CloudNativePG's release manifest in ../cnpg/; with --node,
# {kubelet,kube-scheduler,kube-proxy,kubectl,coredns,traefik} (the local cluster's node pieces, its ingress
# controller), and cnpg-manager (CloudNativePG's operator; E2E_CNPG=0 leaves it out).
# (SCRIPTORIUM_CACHE defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/scriptorium). Versions live in
# tools/kube/versions.env; packages/kube-testenv/src/binaries.ts computes the same path.
# Everything Go writes (GOPATH, GOMODCACHE, GOCACHE, the wrapper modules) stays under the cache,
# never in the repository. Binaries are static (CGO_ENABLED=0), built with -trimpath -ldflags "-s -w".
# A binary already present with the right version is reused; only missing ones are built.
set -euo pipefail

mode=control-plane
case ${1:-} in
'') ;;
--node) mode=node ;;
--kind) mode=kind ;;
*) echo "usage: build.sh [--node|--kind]" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/kube/versions.env
source "$here/versions.env"
# shellcheck source=tools/build/lib.sh
source "$here/../build/lib.sh"

cache=${SCRIPTORIUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scriptorium}
kube_root="$cache/kube/$KUBE_VERSION"
bin="$kube_root/bin"
jobs=${SCRIPTORIUM_KUBE_JOBS:-2}

log() { echo "kube-bins: $*" >&2; }

go_env "$cache"
mkdir -p "$bin"

# Two `make` runs at once must not build into the same place.
exec 9>"$cache/kube/.build.lock"
flock 9

# The cache key of a binary is its stamp: the version it is built from and its recipe (recipe_key, tools/build/lib.sh).
# A changed version or recipe rebuilds it; nothing else does.
# has NAME STAMP: the binary exists and was built with this stamp.
has() { [[ -x "$bin/$1" && -f "$bin/.$1.version" && $(<"$bin/.$1.version") == "$2" ]]; }
# reused NAME STAMP: has, and then a `cached` step row.
reused() { has "$1" "$2" && step_artifact "$1" 0 cached; }
# mark NAME STAMP SECONDS: record the stamp and how long the build took.
mark() {
	echo "$2" >"$bin/.$1.version"
	printf '%s\t%s\t%ss\t%s\n' "$1" "$2" "$3" "$(date -u +%FT%TZ)" >>"$kube_root/build-times.tsv"
	log "$1 $2 built in $3s"
}

ldflags_common="-s -w"

# kube_build SRC_NAME WRAPPERS BIN...: build the named k8s.io/kubernetes binaries from the wrapper
# module tools/kube/wrappers/WRAPPERS, in ONE `go build` so their shared packages compile once
# (and reuse the GOCACHE of any earlier build at the same version).
kube_build() {
	local src_name=$1 wrappers=$2; shift 2
	local names=("$@") name missing=()
	local stamp="$KUBE_VERSION recipe $(recipe_key kube_build -- "$here/wrappers/$wrappers" "$here/gen-kube-gomod.sh")"
	for name in "${names[@]}"; do has "$name" "$stamp" || missing+=("$name"); done
	# One row for the group: they are built together, in one `go build`.
	((${#missing[@]})) || { step_artifact "$(IFS=+ && echo "${names[*]}")" 0 cached; return 0; }
	local src="$kube_root/src/$src_name" started=$SECONDS
	need_go "${missing[0]}"
	log "building ${missing[*]} $KUBE_VERSION"
	rm -rf "$src" && mkdir -p "$src"
	cp -r "$here/wrappers/$wrappers/." "$src/"
	bash "$here/gen-kube-gomod.sh" "$KUBE_VERSION" >"$src/go.mod"
	local minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
	local vpkg ldflags="$ldflags_common"
	# The same version stamps upstream's hack/lib/version.sh sets, so /version answers the truth.
	for vpkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $vpkg.gitVersion=$KUBE_VERSION -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor"
		ldflags+=" -X $vpkg.gitTreeState=clean -X $vpkg.buildDate=1970-01-01T00:00:00Z"
	done
	(
		cd "$src"
		go mod tidy
		go build -p "$jobs" -trimpath -ldflags "$ldflags" -o "$src/out/" "${missing[@]/#/./}"
	)
	local took=$((SECONDS - started))
	for name in "${missing[@]}"; do
		mv -f "$src/out/$name" "$bin/"
		mark "$name" "$stamp" "$took"
	done
	step_artifact "$(IFS=+ && echo "${names[*]}")" "$took" built
}

# kube-apiserver and kube-controller-manager (first build: ~30-45 min on 2 cores).
build_kube() { kube_build kubernetes kubernetes kube-apiserver kube-controller-manager; }

# The node pieces of tools/cluster (`--node`): the kubelet, kube-scheduler, kube-proxy, and a kubectl
# of the same version.
build_kube_node() { kube_build kubernetes-node kubernetes-node kubelet kube-scheduler kube-proxy kubectl; }
# kubeadm, for kind's node image (`--kind`), in a wrapper module of its own (the go build cache is shared).
build_kubeadm() { kube_build kubeadm kubeadm kubeadm; }

build_etcd() {
	local stamp="$ETCD_VERSION recipe $(recipe_key build_etcd -- "$here/wrappers/etcd")"
	if reused etcd "$stamp"; then return; fi
	local src="$kube_root/src/etcd" started=$SECONDS
	need_go etcd
	log "building etcd $ETCD_VERSION"
	rm -rf "$src" && mkdir -p "$src"
	cp "$here/wrappers/etcd/main.go" "$src/"
	(
		cd "$src"
		printf 'module scriptorium.dev/etcd-wrapper\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >go.mod
		go mod tidy
		go build -p "$jobs" -trimpath -ldflags "$ldflags_common" -o "$src/out/etcd" .
	)
	mv -f "$src/out/etcd" "$bin/etcd"
	mark etcd "$stamp" $((SECONDS - started))
	step_artifact etcd $((SECONDS - started)) built
}

# build_plain NAME MODULE/PKG VERSION [LDFLAGS_FUNCTION]: `go install` for modules without replace
# directives. LDFLAGS_FUNCTION (run only when building) prints extra -X flags; it is part of the recipe.
build_plain() {
	local name=$1 pkg=$2 version=$3 flags_fn=${4:-} started=$SECONDS
	local stamp
	stamp="$version recipe $(recipe_key build_plain ${flags_fn:+"$flags_fn"})"
	if reused "$name" "$stamp"; then return; fi
	need_go "$name"
	log "building $name $version"
	local extra=
	[[ -z $flags_fn ]] || extra=$("$flags_fn")
	GOBIN="$kube_root/src/gobin" go install -trimpath -ldflags "$ldflags_common $extra" "$pkg@$version"
	mv -f "$kube_root/src/gobin/$name" "$bin/$name"
	mark "$name" "$stamp" $((SECONDS - started))
	step_artifact "$name" $((SECONDS - started)) built
}

# Helm's default Kubernetes version (for `helm template` and `helm lint` capabilities) is set at
# link time from the client-go it is built with, as helm's own Makefile does; without it, helm
# assumes Kubernetes 1.20 and refuses charts with a newer kubeVersion.
helm_ldflags() {
	local gomod client_go major minor
	gomod=$(cd / && go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
	client_go=$(sed -nE 's#^[[:space:]]*k8s\.io/client-go (v[0-9.]+).*#\1#p' "$gomod" | head -1)
	[[ $client_go =~ ^v0\.([0-9]+)\. ]] || { log "cannot read the client-go version of helm $HELM_VERSION"; exit 1; }
	major=1 minor=${BASH_REMATCH[1]}
	local p out="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
	for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
		out+=" -X $p.k8sVersionMajor=$major -X $p.k8sVersionMinor=$minor"
	done
	echo "$out"
}

coredns_ldflags() { echo "-X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION"; }

# Traefik, the ingress controller of both test clusters: its go.mod has replace lines (so no `go install`), one of
# them to a nested module of its repository; gen-traefik-wrapper.sh writes the wrapper module (and leaves lego's
# DNS-01 providers out, which the stamp says), and `cmd/traefik` is built from the module cache inside it, with the
# version stamps of upstream's Makefile. Cost: docs/operations.md.
build_traefik() {
	local stamp="$TRAEFIK_VERSION without DNS-01 providers, recipe $(recipe_key build_traefik -- "$here/gen-traefik-wrapper.sh")"
	if reused traefik "$stamp"; then return; fi
	local src="$kube_root/src/traefik" started=$SECONDS pkg=github.com/traefik/traefik/v3
	need_go traefik
	log "building traefik $TRAEFIK_VERSION"
	rm -rf "$src" && mkdir -p "$src"
	bash "$here/gen-traefik-wrapper.sh" "$TRAEFIK_VERSION" "$src"
	(
		cd "$src"
		go build -p "$jobs" -trimpath -o "$src/out/traefik" \
			-ldflags "$ldflags_common -X $pkg/pkg/version.Version=$TRAEFIK_VERSION -X $pkg/pkg/version.BuildDate=1970-01-01T00:00:00Z" \
			"$pkg/cmd/traefik"
	)
	mv -f "$src/out/traefik" "$bin/traefik"
	mark traefik "$stamp" $((SECONDS - started))
	step_artifact traefik $((SECONDS - started)) built
}

# build_wrapped NAME MODULE VERSION PKG: a package of a module whose go.mod has replace lines to other published
# modules, from the wrapper module gen-go-wrapper.sh writes (its go, godebug, exclude and replace lines repeated).
build_wrapped() {
	local name=$1 module=$2 version=$3 pkg=$4 started=$SECONDS
	local stamp="$version recipe $(recipe_key build_wrapped -- "$here/gen-go-wrapper.sh")"
	if reused "$name" "$stamp"; then return; fi
	local src="$kube_root/src/$name"
	need_go "$name"
	log "building $name $version"
	rm -rf "$src" && mkdir -p "$src"
	bash "$here/gen-go-wrapper.sh" "$module" "$version" "$src"
	(cd "$src" && go build -p "$jobs" -trimpath -ldflags "$ldflags_common" -o "$src/out/$name" "$pkg")
	mv -f "$src/out/$name" "$bin/$name"
	mark "$name" "$stamp" $((SECONDS - started))
	step_artifact "$name" $((SECONDS - started)) built
}

# CloudNativePG's release manifest (CRDs, RBAC, its Deployment and webhooks), from the module at CNPG_VERSION:
# the integration tests install its Cluster CRD, the end-to-end suite the whole manifest. A download, no build.
cnpg_manifest() {
	local out="$kube_root/cnpg/$CNPG_VERSION/cnpg.yaml" dir started=$SECONDS
	if [[ -f $out ]]; then step_artifact cnpg-manifest 0 cached; return 0; fi
	need_go cnpg-manifest
	dir=$(cd / && go mod download -json "github.com/cloudnative-pg/cloudnative-pg@$CNPG_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	[[ -f $dir/releases/cnpg-${CNPG_VERSION#v}.yaml ]] || { log "no release manifest in CloudNativePG $CNPG_VERSION"; exit 1; }
	mkdir -p "$(dirname "$out")"
	cp "$dir/releases/cnpg-${CNPG_VERSION#v}.yaml" "$out.tmp" && mv "$out.tmp" "$out"
	step_artifact cnpg-manifest $((SECONDS - started)) built
}

# CloudNativePG's operator, `cmd/manager`, as `cnpg-manager`, with the version stamps of upstream's Makefile. The
# same binary is the instance manager CloudNativePG copies into every PostgreSQL pod. For the end-to-end suite
# (`--node`, unless E2E_CNPG=0); its image: tools/cluster/images.sh. From a wrapper module (gen-go-wrapper.sh), not
# `go install pkg@version`: that asks the proxy for the module's version list (its deprecation check), which the
# proxy here refuses with 403 for this module.
build_cnpg() {
	local stamp started=$SECONDS pkg=github.com/cloudnative-pg/cloudnative-pg src="$kube_root/src/cnpg-manager"
	stamp="$CNPG_VERSION recipe $(recipe_key build_cnpg -- "$here/gen-go-wrapper.sh")"
	if reused cnpg-manager "$stamp"; then return; fi
	need_go cnpg-manager
	log "building cnpg-manager $CNPG_VERSION"
	rm -rf "$src" && mkdir -p "$src"
	bash "$here/gen-go-wrapper.sh" "$pkg" "$CNPG_VERSION" "$src"
	(cd "$src" && go build -p "$jobs" -trimpath -o "$src/out/cnpg-manager" -ldflags "$ldflags_common \
		-X $pkg/pkg/versions.buildVersion=${CNPG_VERSION#v} -X $pkg/pkg/versions.buildCommit=$CNPG_VERSION \
		-X $pkg/pkg/versions.buildDate=1970-01-01" "$pkg/cmd/manager")
	mv -f "$src/out/cnpg-manager" "$bin/cnpg-manager"
	mark cnpg-manager "$stamp" $((SECONDS - started))
	step_artifact cnpg-manager $((SECONDS - started)) built
}

build_etcd
cnpg_manifest
# SeaweedFS's `weed` (the S3 server of the ledger's backup tests; cost: docs/operations.md).
build_wrapped weed github.com/seaweedfs/seaweedfs "$SEAWEEDFS_VERSION" github.com/seaweedfs/seaweedfs/weed
build_plain helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION" helm_ldflags
build_plain kind sigs.k8s.io/kind "$KIND_VERSION"
build_kube
if [[ $mode == node || $mode == kind ]]; then
	build_kube_node
	build_plain coredns github.com/coredns/coredns "$COREDNS_VERSION" coredns_ldflags
	build_traefik
	# CloudNativePG's operator, for the local end-to-end suite's managed-database test (deploy/e2e/cnpg.test.ts;
	# E2E_CNPG=0 leaves it out).
	[[ ${E2E_CNPG:-1} != 1 ]] || build_cnpg
fi
[[ $mode != kind ]] || build_kubeadm

echo "$bin"
