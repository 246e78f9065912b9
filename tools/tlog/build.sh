#!/usr/bin/env bash
# Build (or reuse) the transparency-log tools the witness tests run against, and print their bin folder:
#   litewitness              an independent C2SP tlog-witness (filippo.io/torchwood), built with `go install` (its
#                            go.mod has no replace lines); SQLite is modernc's pure Go one, so CGO stays off. It signs
#                            with a key held by an ssh-agent (openssh-client). Its companion witnessctl is not built:
#                            it imports sigsum.org/sigsum-go, whose module zip the proxy answers 403 for here; the
#                            tests write the two rows its add-log and add-key write (test/litewitness.ts).
#   note-verify              tools/tlog/note-verify: Go's golang.org/x/mod note and tlog packages checking what our
#                            nodes and witness write, built in a wrapper module under the cache.
# Output: $SCRIPTORIUM_CACHE/tlog/bin/{litewitness,note-verify}, each with a stamp `.<name>.version`
# (its version and recipe key, tools/build/lib.sh): a matching stamp is reused, anything else is rebuilt. Go's module
# and build caches are the ones tools/kube/build.sh uses, under the same cache; nothing is written to the repository.
# Versions: tools/tlog/versions.env. Cost (cold and warm): docs/operations.md, "CI time".
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/tlog/versions.env
source "$here/versions.env"
# shellcheck source=tools/build/lib.sh
source "$here/../build/lib.sh"

cache=${SCRIPTORIUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scriptorium}
root="$cache/tlog"
bin="$root/bin"
jobs=${SCRIPTORIUM_KUBE_JOBS:-2}
log() { echo "tlog-bins: $*" >&2; }
go_env "$cache"
mkdir -p "$bin"
exec 9>"$root/.build.lock"
flock 9

has() { [[ -x "$bin/$1" && -f "$bin/.$1.version" && $(<"$bin/.$1.version") == "$2" ]]; }
mark() {
	echo "$2" >"$bin/.$1.version"
	printf '%s\t%s\t%ss\t%s\n' "$1" "$2" "$3" "$(date -u +%FT%TZ)" >>"$root/build-times.tsv"
	log "$1 $2 built in $3s"
}

build_litewitness() {
	local stamp="$TORCHWOOD_VERSION recipe $(recipe_key build_litewitness)" started=$SECONDS
	if has litewitness "$stamp"; then
		step_artifact litewitness 0 cached
		return
	fi
	need_go litewitness
	log "building litewitness $TORCHWOOD_VERSION"
	GOBIN="$root/src/gobin" go install -p "$jobs" -trimpath -ldflags "-s -w" \
		"filippo.io/torchwood/cmd/litewitness@$TORCHWOOD_VERSION"
	mv -f "$root/src/gobin/litewitness" "$bin/litewitness"
	mark litewitness "$stamp" $((SECONDS - started))
	step_artifact litewitness $((SECONDS - started)) built
}

# note-verify: tools/tlog/note-verify/main.go in a wrapper module requiring golang.org/x/mod.
build_note_verify() {
	local stamp="$XMOD_VERSION recipe $(recipe_key build_note_verify -- "$here/note-verify")" started=$SECONDS
	if has note-verify "$stamp"; then
		step_artifact note-verify 0 cached
		return
	fi
	need_go note-verify
	log "building note-verify (golang.org/x/mod $XMOD_VERSION)"
	local src="$root/src/note-verify"
	rm -rf "$src" && mkdir -p "$src"
	cp "$here/note-verify/main.go" "$src/"
	(
		cd "$src"
		printf 'module scriptorium.dev/note-verify\n\ngo 1.24\n\nrequire golang.org/x/mod %s\n' "$XMOD_VERSION" >go.mod
		go mod tidy
		go build -p "$jobs" -trimpath -ldflags "-s -w" -o "$bin/note-verify" .
	)
	mark note-verify "$stamp" $((SECONDS - started))
	step_artifact note-verify $((SECONDS - started)) built
}

build_litewitness
build_note_verify
echo "$bin"
