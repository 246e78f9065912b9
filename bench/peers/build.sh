#!/usr/bin/env bash
# Build (or reuse) the peers of bench/peers and print one JSON line {"cometbft": BIN, "portkey": DIR}:
#   cometbft   github.com/cometbft/cometbft/cmd/cometbft, `go install` from the Go module proxy (static, CGO off)
#   portkey    @portkey-ai/gateway, `npm install --prefix` into its own folder per version
# Output: $SCRIPTORIUM_CACHE/peers/bin/cometbft with a stamp `.cometbft.version` (version and recipe key,
# tools/build/lib.sh), and $SCRIPTORIUM_CACHE/portkey/$PORTKEY_VERSION. A matching stamp is reused, anything else is
# rebuilt. Go's module and build caches are the ones tools/kube/build.sh and tools/tlog/build.sh use.
# Versions: bench/peers/versions.env.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/peers/versions.env
source "$here/versions.env"
# shellcheck source=tools/build/lib.sh
source "$here/../../tools/build/lib.sh"

cache=${SCRIPTORIUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scriptorium}
root="$cache/peers"
bin="$root/bin"
jobs=${SCRIPTORIUM_KUBE_JOBS:-2}
log() { echo "peers-bins: $*" >&2; }

go_env "$cache"
mkdir -p "$bin"
exec 9>"$root/.build.lock"
flock 9

build_cometbft() {
	local stamp="$COMETBFT_VERSION recipe $(recipe_key build_cometbft)" started=$SECONDS
	if [[ -x "$bin/cometbft" && -f "$bin/.cometbft.version" && $(<"$bin/.cometbft.version") == "$stamp" ]]; then
		step_artifact cometbft 0 cached
		return
	fi
	command -v go >/dev/null || { log "no 'go' on PATH; install Go >= 1.23 to build cometbft"; exit 1; }
	mkdir -p "$GOPATH" "$GOMODCACHE" "$GOCACHE"
	log "building cometbft $COMETBFT_VERSION"
	GOBIN="$root/src/gobin" go install -p "$jobs" -trimpath -ldflags "-s -w" \
		"github.com/cometbft/cometbft/cmd/cometbft@$COMETBFT_VERSION" >&2
	mv -f "$root/src/gobin/cometbft" "$bin/cometbft"
	echo "$stamp" >"$bin/.cometbft.version"
	log "cometbft $COMETBFT_VERSION built in $((SECONDS - started))s"
	step_artifact cometbft $((SECONDS - started)) built
}

# The package pins its own dependencies (its lockfile is not published), so the folder is per version.
install_portkey() {
	local dir="$cache/portkey/$PORTKEY_VERSION" started=$SECONDS
	if [[ -f "$dir/node_modules/@portkey-ai/gateway/package.json" ]]; then
		step_artifact portkey 0 cached
		return
	fi
	log "installing @portkey-ai/gateway@$PORTKEY_VERSION"
	mkdir -p "$dir"
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@portkey-ai/gateway@$PORTKEY_VERSION" >&2
	step_artifact portkey $((SECONDS - started)) built
}

build_cometbft
install_portkey
printf '{"cometbft":"%s","portkey":"%s"}\n' "$bin/cometbft" "$cache/portkey/$PORTKEY_VERSION"
