# What every build script shares (sourced, not run): cache keys, and step timing for CI.
#
# Cache keys. An artifact (a Go binary, an image, a third-party build) is rebuilt only when its key changes: the
# version it is built from and its recipe, a hash of the bash functions that build it and of the files they copy or
# run (recipe_key). The key is written beside the artifact (its stamp); a matching stamp means reuse.
#
# Steps. Every step prints one line
#   step: NAME 42 s built
# to stderr, and, when SCRIPTORIUM_STEPS names a file (`.ci/run` sets it), appends the row
#   NAME<TAB>SECONDS<TAB>STATUS
# to it, which tools/build/step-report.ts prints as the run's step table. STATUS is what happened:
#   ran     a test stage or a command that always runs
#   built   an artifact made from its recipe (nothing in the cache matched its key)
#   cached  an artifact whose cache key matched: reused, nothing built
#   failed  the step's command failed
# shellcheck shell=bash

# step_record NAME SECONDS STATUS: one row (and its line).
step_record() {
	echo "step: $1 $2 s $3" >&2
	if [[ -n ${SCRIPTORIUM_STEPS:-} ]]; then
		mkdir -p "$(dirname "$SCRIPTORIUM_STEPS")"
		printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$SCRIPTORIUM_STEPS"
	fi
}

# step_run NAME CMD...: runs CMD as the step NAME (status ran, or failed with CMD's exit status, which it returns).
step_run() {
	# Names a called function cannot overwrite (bash scopes variables dynamically).
	local __step_name=$1 __step_started=$SECONDS __step_rc=0
	shift
	"$@" || __step_rc=$?
	step_record "$__step_name" $((SECONDS - __step_started)) "$([[ $__step_rc == 0 ]] && echo ran || echo failed)"
	return "$__step_rc"
}

# step_artifact NAME SECONDS built|cached: the row of an artifact (build/NAME), once per run: a later stage that
# asks for the same artifact again adds no row (it is reused either way).
step_artifact() {
	if [[ -n ${SCRIPTORIUM_STEPS:-} && -f $SCRIPTORIUM_STEPS ]] && grep -q "^build/$1	" "$SCRIPTORIUM_STEPS"; then return 0; fi
	step_record "build/$1" "$2" "$3"
}

# recipe_key FUNCTION... [-- FILE_OR_DIR...]: 12 hex characters over the functions' text and the files' bytes.
recipe_key() {
	{
		while (($#)) && [[ $1 != -- ]]; do declare -f "$1"; shift; done
		(($#)) && shift
		local f
		for f in "$@"; do find "$f" -type f -print0 | LC_ALL=C sort -z | xargs -0 cat; done
	} | sha256sum | cut -c1-12
}

# go_env CACHE: the environment of every Go build (sourced scripts call it once). Everything Go writes (GOPATH,
# GOMODCACHE, GOCACHE) stays under CACHE, shared by every build script, never in the repository; binaries are static
# (CGO off). GOTOOLCHAIN=auto (Go's default): an older local Go fetches the toolchain a module needs (etcd v3.5.35
# wants go >= 1.26) from the same module proxy, instead of failing.
go_env() {
	export GOPATH="$1/go/path" GOMODCACHE="$1/go/mod" GOCACHE="$1/go/build"
	export CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-auto} GOFLAGS="-mod=mod -buildvcs=false"
	export GOPROXY=${GOPROXY:-https://proxy.golang.org,direct}
	mkdir -p "$GOPATH" "$GOMODCACHE" "$GOCACHE"
}

# need_go WHAT: only a build needs Go (reusing cached binaries does not); without it, says what it was for and exits.
need_go() {
	command -v go >/dev/null || { echo "no 'go' on PATH; install Go >= 1.24 (https://go.dev/dl/) to build $1" >&2; exit 1; }
}
