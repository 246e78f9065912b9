#!/usr/bin/env bash
# Build every container image the local cluster needs, without any registry, and export each one
# as an OCI archive that tools/cluster/up.sh imports into containerd's k8s.io namespace.
#
#   bash tools/cluster/images.sh            # base images + the project's Dockerfiles (rebuilt when their
#                                           # inputs changed; FORCE=1 rebuilds them anyway)
#   bash tools/cluster/images.sh --base     # only the base images (node, pause, postgres, coredns, traefik)
#   bash tools/cluster/images.sh --rootfs   # only the Debian minbase rootfs they and kind's base image start from
#
# Base images (no registry is reachable, so each is built from a local rootfs):
#   docker.io/library/node:24-bookworm-slim   Debian bookworm (debootstrap --variant=minbase) + Node 24
#                                            and npm from the npm registry, a `node` user (1000:1000)
#   localhost/scriptorium/pause:1             a static Go program that sleeps on pause (sandbox image)
#   localhost/scriptorium/coredns:$COREDNS_VERSION  the CoreDNS binary of tools/kube/build.sh --node
#   localhost/scriptorium/traefik:$TRAEFIK_VERSION  the Traefik binary of tools/kube/build.sh --node (the ingress
#                                            controller, deploy/traefik.yaml)
#   localhost/scriptorium/postgres:15-bookworm  Debian's postgresql package + tools/cluster/postgres/entrypoint.sh
#   unless E2E_CNPG=0: localhost/scriptorium/cloudnative-pg:$CNPG_VERSION (the cnpg-manager binary of
#   tools/kube/build.sh --node) and localhost/scriptorium/cnpg-postgres:15 (its PostgreSQL operand)
# Project images (their Dockerfiles built unchanged with buildah, tagged as the chart expects):
#   docker.io/scriptorium/{operator,translation,ledger-node}:dev
#
# Everything lands under $SCRIPTORIUM_CACHE/cluster (rootfs trees, tarballs, images/*.oci.tar);
# buildah keeps its vfs storage in its default place (/var/lib/containers/storage). Root only.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${SCRIPTORIUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scriptorium}
work="$cache/cluster"
out="$work/images"
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
node_major=24
log() { echo "cluster-images: $*" >&2; }
# shellcheck source=tools/build/lib.sh
source "$here/../build/lib.sh"

mode=all
case ${1:-} in
'') ;;
--base) mode=base ;;
--rootfs) mode=rootfs ;;
*) echo "usage: images.sh [--base|--rootfs]" >&2; exit 2 ;;
esac
[[ $(id -u) == 0 ]] || { log "must run as root (debootstrap, chroot, buildah)"; exit 1; }

# The Debian tools this needs; installed when absent (the machine's apt sources reach the mirror).
need_pkgs=()
command -v debootstrap >/dev/null || need_pkgs+=(debootstrap)
command -v buildah >/dev/null || need_pkgs+=(buildah)
command -v go >/dev/null || need_pkgs+=(golang-go)
if ((${#need_pkgs[@]})); then
	log "installing ${need_pkgs[*]}"
	apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need_pkgs[@]}"
fi
command -v npm >/dev/null || { log "npm is needed to fetch Node $node_major (run 'make deps' or tools/ensure-node.sh)"; exit 1; }

mkdir -p "$work" "$out"
exec 9>"$work/.images.lock"
flock 9

bah() { buildah --storage-driver vfs "$@"; }

# image_from_rootfs TAG ROOTFS [CONTAINERFILE_LINES...]: tar ROOTFS and build TAG FROM scratch.
image_from_rootfs() {
	local tag=$1 rootfs=$2; shift 2
	local ctx="$work/ctx/${tag//[\/:]/_}"
	rm -rf "$ctx" && mkdir -p "$ctx"
	tar --numeric-owner -C "$rootfs" -cf "$ctx/rootfs.tar" .
	{ echo "FROM scratch"; echo "ADD rootfs.tar /"; printf '%s\n' "$@"; } >"$ctx/Containerfile"
	bah bud --isolation chroot --layers=false -f "$ctx/Containerfile" -t "$tag" "$ctx" >&2
	rm -rf "$ctx"
}

# export_image TAG FILE: write TAG as an OCI archive that keeps TAG as its reference name.
export_image() {
	rm -f "$out/$2"
	bah push "$1" "oci-archive:$out/$2:$1" >&2
	log "exported $1 -> $out/$2"
}

# A stamp records what an output was built from (its cache key: inputs and recipe); a changed input rebuilds it.
fresh() { [[ -f $1 && $(<"$1") == "$2" ]]; }
# recipe FUNCTION...: the recipe part of an image's key: its functions and the two every image goes through.
recipe() { echo "recipe $(recipe_key "$@" image_from_rootfs export_image)"; }

# image_step NAME STAMP_FILE FUNCTION [ARGS...]: runs the image's function; a `built` step row when it wrote a new
# stamp, else `cached`.
image_step() {
	local name=$1 stamp=$2 started=$SECONDS before after
	shift 2
	before=$(cat "$stamp" 2>/dev/null || true)
	"$@"
	after=$(cat "$stamp" 2>/dev/null || true)
	if [[ $before == "$after" ]]; then step_artifact "image/$name" 0 cached; else step_artifact "image/$name" $((SECONDS - started)) built; fi
}

base_rootfs() {
	local dir="$work/rootfs/bookworm-minbase" stamp
	stamp="bookworm minbase $mirror $(recipe base_rootfs)"
	if fresh "$dir.stamp" "$stamp"; then return; fi
	log "debootstrap bookworm (minbase) into $dir"
	rm -rf "$dir" && mkdir -p "$dir"
	debootstrap --variant=minbase --include=ca-certificates bookworm "$dir" "$mirror" >&2
	chroot "$dir" apt-get clean
	rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin
	echo "$stamp" >"$dir.stamp"
}

node_image() {
	local tag=docker.io/library/node:$node_major-bookworm-slim npmdir="$work/node-dist"
	local version
	mkdir -p "$npmdir"
	if [[ ! -x $npmdir/node_modules/node/bin/node || ! -d $npmdir/node_modules/npm ]]; then
		log "fetching node@$node_major and npm from the npm registry"
		npm i --prefix "$npmdir" --no-audit --no-fund --loglevel=error "node@$node_major" "npm@11" >&2
	fi
	version=$("$npmdir/node_modules/node/bin/node" --version)
	local cas
	cas=$(cat /usr/local/share/ca-certificates/*.crt 2>/dev/null | sha256sum | cut -c1-16)
	local stamp="$version npm $(node -p "require('$npmdir/node_modules/npm/package.json').version") cas $cas $(<"$work/rootfs/bookworm-minbase.stamp") $(recipe node_image)"
	if fresh "$out/node.stamp" "$stamp" && [[ -f $out/node.oci.tar ]]; then return; fi
	local root="$work/rootfs/node"
	rm -rf "$root" && cp -a "$work/rootfs/bookworm-minbase" "$root"
	install -m 0755 "$npmdir/node_modules/node/bin/node" "$root/usr/local/bin/node"
	mkdir -p "$root/usr/local/lib/node_modules"
	cp -a "$npmdir/node_modules/npm" "$root/usr/local/lib/node_modules/npm"
	ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
	ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
	# The machine's own extra CAs (e.g. a TLS-inspecting egress proxy in front of the npm registry),
	# so `npm ci` in a Dockerfile's RUN step trusts what the host trusts. npm reads the cafile from
	# its global npmrc (/usr/local/etc/npmrc); the runtime environment of the image is unchanged.
	if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
		cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
		chroot "$root" update-ca-certificates >/dev/null
		mkdir -p "$root/usr/local/etc"
		echo "cafile=/etc/ssl/certs/ca-certificates.crt" >"$root/usr/local/etc/npmrc"
	fi
	# The official image's `node` user and group, uid/gid 1000, home /home/node.
	chroot "$root" groupadd --gid 1000 node
	chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
	image_from_rootfs "$tag" "$root" "ENV NODE_VERSION=${version#v}" 'CMD ["node"]'
	rm -rf "$root"
	export_image "$tag" node.oci.tar
	echo "$stamp" >"$out/node.stamp"
}

pause_image() {
	local tag=localhost/scriptorium/pause:1 src="$work/pause-src" root="$work/rootfs/pause"
	local stamp
	stamp="$(cat "$here/pause/main.go" "$here/pause/go.mod" | sha256sum | cut -d' ' -f1) $(recipe pause_image)"
	if fresh "$out/pause.stamp" "$stamp" && [[ -f $out/pause.oci.tar ]]; then return; fi
	log "building the pause binary"
	rm -rf "$src" "$root" && mkdir -p "$src" "$root"
	cp "$here/pause/main.go" "$here/pause/go.mod" "$src/"
	(cd "$src" && GOPATH="$cache/go/path" GOMODCACHE="$cache/go/mod" GOCACHE="$cache/go/build" \
		CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$root/pause" .)
	image_from_rootfs "$tag" "$root" 'USER 65535:65535' 'ENTRYPOINT ["/pause"]'
	rm -rf "$root" "$src"
	export_image "$tag" pause.oci.tar
	echo "$stamp" >"$out/pause.stamp"
}

# postgres_rootfs ROOT: a copy of the base rootfs with Debian's postgresql-15, what both PostgreSQL images start from.
# No service starts inside the chroot, and no default cluster (the entrypoint or the instance manager runs initdb).
postgres_rootfs() {
	local root=$1
	rm -rf "$root" && cp -a "$work/rootfs/bookworm-minbase" "$root"
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" && chmod 0755 "$root/usr/sbin/policy-rc.d"
	mkdir -p "$root/etc/postgresql-common"
	echo "create_main_cluster = false" >"$root/etc/postgresql-common/createcluster.conf"
	chroot "$root" apt-get update -q >&2
	DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y --no-install-recommends postgresql-15 >&2
	chroot "$root" apt-get clean
	rm -rf "$root"/var/lib/apt/lists/* "$root/usr/sbin/policy-rc.d"
	: >"$root/etc/resolv.conf"
}

postgres_image() {
	local tag=localhost/scriptorium/postgres:15-bookworm root="$work/rootfs/postgres"
	local stamp
	stamp="$(sha256sum <"$here/postgres/entrypoint.sh" | cut -d' ' -f1) $(<"$work/rootfs/bookworm-minbase.stamp") $(recipe postgres_image postgres_rootfs)"
	if fresh "$out/postgres.stamp" "$stamp" && [[ -f $out/postgres.oci.tar ]]; then return; fi
	log "installing Debian's postgresql into a copy of the base rootfs"
	postgres_rootfs "$root"
	# The uid/gid deploy/postgres.yaml runs as (70, as in the alpine image), so initdb finds its user.
	chroot "$root" groupmod -g 70 postgres
	chroot "$root" usermod -u 70 -g 70 postgres
	mkdir -p "$root/var/lib/postgresql/data" "$root/var/run/postgresql"
	chroot "$root" chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
	install -m 0755 "$here/postgres/entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"
	image_from_rootfs "$tag" "$root" \
		'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		'ENV PGDATA=/var/lib/postgresql/data' 'USER 70:70' 'EXPOSE 5432' \
		'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]'
	rm -rf "$root"
	export_image "$tag" postgres.oci.tar
	echo "$stamp" >"$out/postgres.stamp"
}

# binary_image NAME REPOSITORY BINARY LAYOUT [CONTAINERFILE_LINES...]: an image of one binary that tools/kube/build.sh
# --node built (its bin/BINARY), tagged localhost/scriptorium/REPOSITORY:VERSION (VERSION: NAME_VERSION, upper case,
# of tools/kube/versions.env), written as $out/NAME.oci.tar. `LAYOUT ROOT BIN` puts the binary into the empty ROOT,
# the image's only contents. Its key: the binary's own stamp (version and recipe: a rebuilt binary makes a new image)
# and the recipe of this function, LAYOUT and the image's function that called it (which holds the lines).
binary_image() {
	local name=$1 repository=$2 binary=$3 layout=$4 version tag bin stamp root="$work/rootfs/$1"
	shift 4
	version=$(sed -n "s/^${name^^}_VERSION=//p" "$here/../kube/versions.env")
	tag=localhost/scriptorium/$repository:$version
	bin="$cache/kube/$(sed -n 's/^KUBE_VERSION=//p' "$here/../kube/versions.env")/bin/$binary"
	[[ -x $bin ]] || { log "no $bin: run 'bash tools/kube/build.sh --node' first"; exit 1; }
	stamp="$(cat "$(dirname "$bin")/.$binary.version" 2>/dev/null || echo "$version") $(recipe "${FUNCNAME[1]}" "$layout" binary_image)"
	if fresh "$out/$name.stamp" "$stamp" && [[ -f $out/$name.oci.tar ]]; then return; fi
	rm -rf "$root" && mkdir -p "$root"
	"$layout" "$root" "$bin"
	image_from_rootfs "$tag" "$root" "$@"
	rm -rf "$root"
	export_image "$tag" "$name.oci.tar"
	echo "$stamp" >"$out/$name.stamp"
}

# CoreDNS: the binary alone, as /coredns.
coredns_image() { binary_image coredns coredns coredns coredns_layout 'EXPOSE 53 53/udp' 'ENTRYPOINT ["/coredns"]'; }
coredns_layout() { install -m 0755 "$2" "$1/coredns"; }

# The ingress controller: the Traefik binary alone, as /usr/local/bin/traefik (upstream's image has it there too, so
# deploy/traefik.yaml gives only args and runs on either).
traefik_image() {
	binary_image traefik traefik traefik traefik_layout \
		'EXPOSE 8000 8443' 'USER 65532:65532' 'ENTRYPOINT ["/usr/local/bin/traefik"]'
}
traefik_layout() {
	mkdir -p "$1/usr/local/bin" "$1/tmp"
	chmod 1777 "$1/tmp"
	install -m 0755 "$2" "$1/usr/local/bin/traefik"
}

# CloudNativePG (unless E2E_CNPG=0: the local end-to-end suite's managed database, deploy/e2e/cnpg.test.ts). Its operator:
# the `cnpg-manager` binary of tools/kube/build.sh --node laid out as upstream's image lays it out: the binary per
# architecture at /operator/manager_<arch> (the operator finds the architectures it can run instances on by that
# name, relative to its working directory /; without it every Cluster fails with "invalid architecture") and /manager
# a link to this machine's (its Deployment runs `/manager controller`, and its init container copies the binary into
# every PostgreSQL pod as the instance manager); user 65532 as upstream's.
cnpg_image() {
	binary_image cnpg cloudnative-pg cnpg-manager cnpg_layout 'WORKDIR /' 'USER 65532:65532' 'ENTRYPOINT ["/manager"]'
}
cnpg_layout() {
	local arch
	arch=$(go env GOARCH 2>/dev/null || echo amd64)
	mkdir -p "$1/tmp" "$1/operator"
	chmod 1777 "$1/tmp"
	install -m 0755 "$2" "$1/operator/manager_$arch"
	ln -s "operator/manager_$arch" "$1/manager"
}

# CloudNativePG's PostgreSQL operand: Debian's postgresql-15 on the base rootfs, its binaries on PATH, and the
# postgres user at uid/gid 26, the ids CloudNativePG runs its instances as (spec.postgresUID/GID defaults). No
# entrypoint: the instance manager CloudNativePG copies in is the container's command. Tagged `15` so CloudNativePG
# reads the major version from the tag.
cnpg_postgres_image() {
	local tag=localhost/scriptorium/cnpg-postgres:15 root="$work/rootfs/cnpg-postgres" stamp
	stamp="$(<"$work/rootfs/bookworm-minbase.stamp") $(recipe cnpg_postgres_image postgres_rootfs)"
	if fresh "$out/cnpg-postgres.stamp" "$stamp" && [[ -f $out/cnpg-postgres.oci.tar ]]; then return; fi
	postgres_rootfs "$root"
	# Debian gives gid 26 to the `tape` group, which no image user needs.
	if chroot "$root" getent group tape >/dev/null; then chroot "$root" groupdel tape; fi
	chroot "$root" groupmod -g 26 postgres
	chroot "$root" usermod -u 26 -g 26 postgres
	mkdir -p "$root/var/lib/postgresql" "$root/var/run/postgresql"
	chroot "$root" chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
	image_from_rootfs "$tag" "$root" \
		'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		'USER 26:26' 'EXPOSE 5432'
	rm -rf "$root"
	export_image "$tag" cnpg-postgres.oci.tar
	echo "$stamp" >"$out/cnpg-postgres.stamp"
}

# inputs_hash DOCKERFILE DIR...: one hash of what a project image is made of: the node base image, the Dockerfile and
# its ignore files (the root .dockerignore, or DOCKERFILE.dockerignore beside it where there is one),
# the npm manifests and lockfile (the deps stage's `npm ci` sees them all; only node_modules leaves it), the pruner
# every deps stage runs
# and DIR (its src folder, without the *.test.ts files .dockerignore drops, and without build output), together with
# every folder of the repository the Dockerfile's COPY lines name (so a package an image copies cannot be left out of
# its key). A fresh clone builds its own code; a rerun with nothing changed skips the build.
inputs_hash() {
	local dockerfile=$1; shift
	(
		cd "$repo"
		cat "$out/node.stamp"
		local copied
		mapfile -t copied < <(grep -E '^COPY ' "$dockerfile" | grep -oE '(packages|services|operator)/[A-Za-z0-9_./-]+' |
			sed 's#^\./##' | while read -r p; do [[ -e $p ]] && echo "$p"; done | LC_ALL=C sort -u)
		{
			# tools/build/prod-deps.ts: every deps stage prunes node_modules with it.
			printf '%s\n' "$dockerfile" "$dockerfile.dockerignore" package.json package-lock.json .dockerignore \
				tools/build/prod-deps.ts
			compgen -G 'packages/*/package.json' || true
			compgen -G 'services/*/package.json' || true
			compgen -G 'operator/package.json' || true
			compgen -G 'harness/package.json' || true
			find "$@" "${copied[@]}" -type f ! -name '*.test.ts' ! -path '*/node_modules/*' ! -path '*/dist/*'
		} | LC_ALL=C sort -u | while read -r f; do [[ -f $f ]] && sha256sum "$f"; done
	) | sha256sum | cut -c1-64
}

# The project's Dockerfiles, unchanged, with the repository root as context (as `make images` does).
# Rebuilt only when inputs_hash changed (stamp $out/NAME.stamp) or FORCE=1.
project_image() {
	local name=$1 dockerfile=$2 tag="docker.io/scriptorium/$1:dev" stamp
	shift 2
	stamp="$(inputs_hash "$dockerfile" "$@") $(recipe project_image)"
	if [[ ${FORCE:-} != 1 ]] && fresh "$out/$name.stamp" "$stamp" && [[ -f $out/$name.oci.tar ]]; then
		log "$tag is up to date (inputs $(cut -c1-12 <<<"$stamp"))"
		return
	fi
	log "building $tag from $dockerfile (inputs $(cut -c1-12 <<<"$stamp"))"
	bah bud --isolation chroot --pull=never -f "$repo/$dockerfile" -t "$tag" "$repo" >&2
	export_image "$tag" "$name.oci.tar"
	echo "$stamp" >"$out/$name.stamp"
}

image_step bookworm-minbase "$work/rootfs/bookworm-minbase.stamp" base_rootfs
[[ $mode == rootfs ]] && exit 0
image_step pause "$out/pause.stamp" pause_image
image_step node "$out/node.stamp" node_image
image_step postgres "$out/postgres.stamp" postgres_image
image_step coredns "$out/coredns.stamp" coredns_image
image_step traefik "$out/traefik.stamp" traefik_image
if [[ ${E2E_CNPG:-1} == 1 ]]; then
	image_step cnpg "$out/cnpg.stamp" cnpg_image
	image_step cnpg-postgres "$out/cnpg-postgres.stamp" cnpg_postgres_image
fi
if [[ $mode == all ]]; then
	# the operator image carries the ledger's wire contract (genesis, keys)
	image_step operator "$out/operator.stamp" project_image operator operator/Dockerfile operator/src packages/ledger-protocol/src
	image_step translation "$out/translation.stamp" project_image translation services/translation/Dockerfile \
		services/translation/src services/translation/web packages/web-build
	image_step ledger-node "$out/ledger-node.stamp" project_image ledger-node services/ledger-node/Dockerfile \
		services/ledger-node/src services/ledger-node/console packages/ledger-protocol/src packages/web-build/src
	# A rebuilt image leaves its predecessor untagged (~400 MB each in the vfs store): remove those.
	bah rmi --prune >/dev/null 2>&1 || true
fi
ls -1 "$out"/*.oci.tar
