#!/usr/bin/env bash
# A runc for dockerd on machines whose root lacks CAP_SYS_RESOURCE in its bounding set (so `docker run
# --privileged`, which asks for every capability, fails in runc with "unable to apply caps: operation not
# permitted"): it removes CAP_SYS_RESOURCE from the container's process spec (the bundle's config.json for
# create/run, the --process file for exec), then runs the real runc with the same arguments.
# dockerd registers it with --add-runtime (tools/kind/engine.sh); nothing else changes.
set -euo pipefail
real=${SCRIPTORIUM_REAL_RUNC:-/usr/sbin/runc}
drop() {
	local file=$1 tmp
	[[ -f $file ]] || return 0
	tmp=$(mktemp "$file.XXXXXX")
	jq '
	  def strip: if type == "array" then map(select(. != "CAP_SYS_RESOURCE")) else . end;
	  (if .process.capabilities then .process.capabilities |= with_entries(.value |= strip) else . end)
	  | (if .capabilities then .capabilities |= with_entries(.value |= strip) else . end)
	' "$file" >"$tmp" && mv "$tmp" "$file"
}
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	case ${args[i]} in
	--bundle | -b) drop "${args[i + 1]}/config.json" ;;
	--bundle=*) drop "${args[i]#--bundle=}/config.json" ;;
	--process | -p) drop "${args[i + 1]}" ;;
	--process=*) drop "${args[i]#--process=}" ;;
	esac
done
exec "$real" "$@"
