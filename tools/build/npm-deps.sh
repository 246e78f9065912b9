#!/usr/bin/env bash
# `make deps` in a checkout without node_modules (a fresh clone, CI): exactly the lockfile, as `npm ci` installs it,
# through a snapshot of that install kept outside the repository.
#
# The snapshot's key is what npm ci's result depends on: package-lock.json, every workspace manifest, Node's and npm's
# versions and this script. A matching snapshot is unpacked (a few seconds; step row `build/npm-deps cached`);
# otherwise npm ci runs (about 25 s with npm's own cache warm, more cold; `built`) and its node_modules, untouched yet,
# becomes the snapshot. Only the newest snapshot is kept (~0.5 GB).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
# shellcheck source=tools/build/lib.sh
source tools/build/lib.sh

dir=${SCRIPTORIUM_CACHE:-$HOME/.cache/scriptorium}/npm-snapshot
key=$(
	{
		cat package-lock.json
		# The workspaces (package.json "workspaces") and the root.
		for f in package.json packages/*/package.json services/*/package.json operator/package.json harness/package.json; do
			[[ -f $f ]] && { echo "$f"; cat "$f"; }
		done
		node --version
		npm --version
		cat "${BASH_SOURCE[0]}"
	} | sha256sum | cut -c1-16
)
snapshot=$dir/node_modules-$key.tar
started=$SECONDS
if [[ -f $snapshot ]]; then
	if tar -xf "$snapshot"; then
		step_artifact npm-deps $((SECONDS - started)) cached
		exit 0
	fi
	# A damaged snapshot (a full disk, an interrupted copy): dropped, and npm ci makes a new one.
	echo "npm-deps: $snapshot does not unpack; running npm ci" >&2
	rm -rf node_modules "$snapshot"
fi
npm ci --no-audit --no-fund --loglevel=error
built=$((SECONDS - started))
mkdir -p "$dir"
tar -cf "$snapshot.$$.tmp" node_modules
mv "$snapshot.$$.tmp" "$snapshot"
find "$dir" -maxdepth 1 -name 'node_modules-*.tar' ! -name "$(basename "$snapshot")" -delete
step_artifact npm-deps "$built" built
