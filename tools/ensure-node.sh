#!/usr/bin/env bash
# Prints a directory that holds Node.js 24 or newer, for the Makefile to put first on PATH.
# Uses the machine's node when it is new enough; otherwise installs the npm registry's
# `node@24` package into a cache folder outside the repository (kept across clones).
set -euo pipefail
want=24
cache="${SCRIPTORIUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scriptorium}"
major_of() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if command -v node >/dev/null 2>&1 && [ "$(major_of node)" -ge "$want" ]; then
  dirname "$(command -v node)"
  exit 0
fi
dir="$cache/node$want"
bin="$dir/node_modules/.bin"
if [ ! -x "$bin/node" ] || [ "$(major_of "$bin/node")" -lt "$want" ]; then
  echo "ensure-node: installing Node.js $want into $dir (machine has $(node --version 2>/dev/null || echo none))" >&2
  mkdir -p "$dir"
  started=$SECONDS
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "node@$want" >&2
  # shellcheck source=tools/build/lib.sh
  source "$(dirname "${BASH_SOURCE[0]}")/build/lib.sh"
  step_artifact "node$want" $((SECONDS - started)) built
fi
echo "$bin"
