#!/usr/bin/env bash
# Build (or reuse) FIWARE Scorpio, the real NGSI-LD broker the ledger watch's integration tests run against, and print
# the path of its runnable jar.
#
#   bash tools/scorpio/build.sh           # `make scorpio`
#   bash tools/scorpio/build.sh --check   # print the jar if it is built with the current key, else exit 1
#
# Source: the release's source tarball (no registry serves it, and the build machines cannot reach its repository),
# read from $SCORPIO_SOURCE, else from `shared/vendor/` beside the checkout (or beside the main checkout of a
# worktree), else from the copy a first build keeps in the cache; its SHA-256 is pinned below, and the cache key uses
# the pinned digest, so a built Scorpio is reused by any checkout, wherever it lies, without the tarball. Output,
# outside the repository:
#   $SCRIPTORIUM_CACHE/scorpio/$SCORPIO_VERSION/quarkus-app/quarkus-run.jar   (the all-in-one runner, in-memory bus)
#   $SCRIPTORIUM_CACHE/maven/repository                                      (Maven's downloads, reused by every build)
# packages/test-support/src/scorpio.ts computes the same path. Cost, cold and warm: tools/scorpio/README.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/build/lib.sh
source "$here/../build/lib.sh"

SCORPIO_VERSION=5.0.3
# scorpio-5.0.3-java-src.tar.gz (release tag 5.0.3-java, commit b382055332590cbc6fbd71d4e9751cfba101be6d)
SCORPIO_SHA256=f742ca103812ffcf2afbe037fa63fdf5c4090c0849db920a2835bc9a26cfa1c8
cache=${SCRIPTORIUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scriptorium}
root="$cache/scorpio/$SCORPIO_VERSION"
maven_repo="$cache/maven/repository"
app="$root/quarkus-app"
stamp_file="$root/.stamp"

log() { echo "scorpio: $*" >&2; }

# The tarball: $SCORPIO_SOURCE, else shared/vendor/ beside the checkout, beside the main checkout (a worktree's
# common git dir names it) or beside the local repository this one was cloned from (a CI clone made elsewhere), else
# the copy the cache keeps.
find_source() {
	local name="scorpio-$SCORPIO_VERSION-java-src.tar.gz" common origin
	if [[ -n ${SCORPIO_SOURCE:-} ]]; then echo "$SCORPIO_SOURCE"; return; fi
	common=$(cd "$here/../.." && git rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
	origin=$(cd "$here/../.." && git config --get remote.origin.url 2>/dev/null || true)
	[[ $origin == /* && -d $origin ]] || origin=
	local dir
	for dir in "$here/../../../shared/vendor" ${common:+"$(dirname "$common")/../shared/vendor"} \
		${origin:+"$origin/../shared/vendor"} "$root/source"; do
		[[ -f $dir/$name ]] && { (cd "$dir" && echo "$PWD/$name"); return; }
	done
	return 1
}

# build_scorpio SRC_TARBALL: extract, then Maven's all-in-one runner with the in-memory message bus (no Kafka), the
# command the release's build notes check; only the runnable quarkus-app folder is kept.
build_scorpio() {
	local tarball=$1 src="$root/src"
	rm -rf "$src" "$app" && mkdir -p "$src" "$maven_repo"
	tar -xzf "$tarball" -C "$src"
	(
		cd "$src"
		mvn -B -q clean package -DskipTests -Pin-memory -Din-memory -Dquarkus.profile=in-memory \
			-Dmaven.repo.local="$maven_repo" -pl AllInOneRunner -am
	)
	mv "$src/AllInOneRunner/target/quarkus-app" "$app"
	rm -rf "$src"
}

check=no
case ${1:-} in
'') ;;
--check) check=yes ;;
*) echo "usage: build.sh [--check]" >&2; exit 2 ;;
esac

# The key: the version, the recipe (the function above) and the pinned digest of the bytes it is built from.
key="$SCORPIO_VERSION recipe $(recipe_key build_scorpio) source ${SCORPIO_SHA256:0:12}"
built() { [[ -f $app/quarkus-run.jar && -f $stamp_file && $(<"$stamp_file") == "$key" ]]; }

if [[ $check == yes ]]; then
	built && { echo "$app/quarkus-run.jar"; exit 0; }
	exit 1
fi

mkdir -p "$root"
# Two `make` runs at once must not build into the same place.
exec 9>"$root/.build.lock"
flock 9
if built; then
	step_artifact scorpio 0 cached
	echo "$app/quarkus-run.jar"
	exit 0
fi
tarball=$(find_source) || {
	log "the source tarball scorpio-$SCORPIO_VERSION-java-src.tar.gz is not found (set SCORPIO_SOURCE to its path)"
	exit 1
}
[[ $(sha256sum "$tarball" | cut -d' ' -f1) == "$SCORPIO_SHA256" ]] || {
	log "$tarball is not the pinned source (SHA-256 $SCORPIO_SHA256)"
	exit 1
}
# Kept in the cache, so a later checkout anywhere rebuilds (a changed recipe) without the shared folder.
kept="$root/source/${tarball##*/}"
if [[ ! -f $kept ]]; then
	mkdir -p "$root/source" && cp "$tarball" "$kept.tmp" && mv -f "$kept.tmp" "$kept"
fi
for cmd in java mvn; do command -v "$cmd" >/dev/null || { log "no '$cmd' on PATH (Java 17 and Maven 3.8 build Scorpio)"; exit 1; }; done
log "building Scorpio $SCORPIO_VERSION (Maven repository: $maven_repo)"
started=$SECONDS
rm -f "$stamp_file"
build_scorpio "$tarball"
echo "$key" >"$stamp_file"
took=$((SECONDS - started))
printf '%s\t%ss\t%s\n' "$key" "$took" "$(date -u +%FT%TZ)" >>"$root/build-times.tsv"
log "built in ${took}s"
step_artifact scorpio "$took" built
echo "$app/quarkus-run.jar"
