#!/usr/bin/env bash
# Install (or reuse) schemathesis, the OpenAPI-driven fuzzer the integration tests run against both services, into a
# virtual environment in the cache, and print its `st` executable.
#
#   bash tools/schemathesis/build.sh        # make test (through the tests), make ci-warm
#
# Output: $SCRIPTORIUM_CACHE/schemathesis/<SCHEMATHESIS_VERSION>-<recipe>/bin/st, stamped with its key (the version
# and this recipe, tools/build/lib.sh); a matching stamp is reused, anything else is rebuilt. Needs python3 with venv
# and a reachable package index (PyPI, or PIP_INDEX_URL).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/build/lib.sh
source "$here/../build/lib.sh"

SCHEMATHESIS_VERSION=4.32.5

cache=${SCRIPTORIUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scriptorium}

install_schemathesis() {
	local dir=$1
	rm -rf "$dir"
	python3 -m venv "$dir"
	"$dir/bin/pip" install --quiet --disable-pip-version-check --no-input "schemathesis==$SCHEMATHESIS_VERSION" >&2
}

key="$SCHEMATHESIS_VERSION-$(recipe_key install_schemathesis)"
dir="$cache/schemathesis/$key"
mkdir -p "$cache/schemathesis"
# Two runs at once must not install into the same place.
exec 9>"$cache/schemathesis/.build.lock"
flock 9
if [[ -x $dir/bin/st && -f $dir/.stamp && $(<"$dir/.stamp") == "$key" ]]; then
	step_artifact schemathesis 0 cached
else
	command -v python3 >/dev/null || { echo "schemathesis: no python3 on PATH (Debian: python3-venv)" >&2; exit 1; }
	echo "schemathesis: installing $SCHEMATHESIS_VERSION into $dir" >&2
	started=$SECONDS
	install_schemathesis "$dir"
	echo "$key" >"$dir/.stamp"
	step_artifact schemathesis $((SECONDS - started)) built
fi
echo "$dir/bin/st"
