#!/usr/bin/env bash
# Write the wrapper module that builds Traefik's `cmd/traefik` at VERSION into DIR.
#
#   tools/kube/gen-traefik-wrapper.sh v3.7.13 DIR
#
# `go install github.com/traefik/traefik/v3/cmd/traefik@VERSION` fails: Traefik's go.mod has `replace` lines
# (the Go tool refuses to install a module that has them) and one of them points to a folder of its own
# repository, `./pkg/config/dynamic/ext`, a nested module that is not in the published module zip and is not
# on the module proxy. This writes, into DIR:
#   - go.mod: requires Traefik at VERSION and repeats its `replace` lines to other modules (its forks), its
#     `exclude` lines and its `godebug` lines, so the build resolves exactly the dependency versions upstream
#     builds with;
#   - ext/: the dynamic-configuration extension module, replaced by this local folder as upstream does. In
#     Traefik's open-source build its types are empty structs embedded inline in the dynamic configuration; the
#     names are read from the release's own source (every `ext.Name` of the files that import the module), so a
#     release that starts to use something else from it fails to compile instead of building a different program.
#   - lego/: ACME's lego module at the version Traefik requires, with its list of DNS-01 providers
#     (providers/dns, about 150 of them, each with its cloud SDK) left out, and a replace line to it. The test
#     clusters use no ACME; without the list the build compiles about a third less source and downloads about
#     230 MB less (docs/operations.md). NewDNSChallengeProviderByName, the one name Traefik uses from the package
#     (checked in the release's source), then answers every name as unknown, as lego does for a name it lacks.
# Any other local `replace` line would need a decision by a human: refused (exit 1).
# The go toolchain, GOMODCACHE and GOPROXY come from the caller. TRAEFIK_GOMOD_FILE, TRAEFIK_SRC_DIR and
# TRAEFIK_LEGO_DIR read a local go.mod and source folders instead of the module proxy's (tests).
set -euo pipefail

version=${1:?usage: gen-traefik-wrapper.sh vX.Y.Z DIR}
out=${2:?usage: gen-traefik-wrapper.sh vX.Y.Z DIR}
[[ $version =~ ^v3\.[0-9]+\.[0-9]+$ ]] || { echo "gen-traefik-wrapper.sh: '$version' is not a v3.Y.Z release" >&2; exit 2; }
module=github.com/traefik/traefik/v3

gomod=${TRAEFIK_GOMOD_FILE:-}
src=${TRAEFIK_SRC_DIR:-}
if [[ -z $gomod || -z $src ]]; then
	info=$(cd / && go mod download -json "$module@$version") || info=
	gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p' <<<"$info")
	src=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$info")
fi
[[ -n $gomod && -f $gomod && -n $src && -d $src ]] ||
	{ echo "gen-traefik-wrapper.sh: could not download $module@$version" >&2; exit 1; }
grep -qx "module $module" "$gomod" || { echo "gen-traefik-wrapper.sh: $gomod is not the go.mod of $module" >&2; exit 1; }

go_line=$(grep -E '^go [0-9]' "$gomod" | head -1)
godebug=$(sed -n '/^godebug (/,/^)/p; /^godebug [^(]/p' "$gomod")
exclude=$(sed -n '/^exclude (/,/^)/p; /^exclude [^(]/p' "$gomod")
# Every replace line, one a line, as "FROM => TO [VERSION]" (from `replace X => Y` and from replace blocks).
replaces=$(
	sed -n -e 's/^replace \([^(].*=>.*\)$/\1/p' -e '/^replace (/,/^)/{/=>/p}' "$gomod" | sed -e 's/^[[:space:]]*//' -e 's#[[:space:]]*//.*$##'
)
forks=() ext_module=
while read -r from arrow to rest; do
	[[ -n $from ]] || continue
	[[ $arrow == "=>" ]] || { echo "gen-traefik-wrapper.sh: cannot read the replace line: $from $arrow $to $rest" >&2; exit 1; }
	if [[ $to == ./* || $to == ../* ]]; then
		# Only the dynamic-configuration extension is understood.
		if [[ $from == */dynamic/ext && $to == ./pkg/config/dynamic/ext ]]; then
			ext_module=$from
		else
			echo "gen-traefik-wrapper.sh: unexpected local replace line in $gomod: $from => $to" >&2
			exit 1
		fi
	else
		[[ -n $rest ]] || { echo "gen-traefik-wrapper.sh: replace without a version: $from => $to" >&2; exit 1; }
		forks+=("$from => $to $rest")
	fi
done <<<"$replaces"

# lego: the version Traefik requires; a replace of it in Traefik's go.mod would need a decision by a human.
lego_module=github.com/go-acme/lego/v4
lego_version=$(sed -nE "s#^[[:space:]]*(require[[:space:]]+)?${lego_module//./\\.}[[:space:]]+(v[^[:space:]]+).*#\2#p" "$gomod" | head -1)
for line in "${forks[@]}"; do
	[[ $line != "$lego_module "* ]] || { echo "gen-traefik-wrapper.sh: Traefik replaces $lego_module itself: $line" >&2; exit 1; }
done
lego_src=
if [[ -n $lego_version ]]; then
	lego_src=${TRAEFIK_LEGO_DIR:-}
	if [[ -z $lego_src ]]; then
		lego_src=$(cd / && go mod download -json "$lego_module@$lego_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p') ||
			lego_src=
	fi
	[[ -n $lego_src && -d $lego_src/providers/dns ]] ||
		{ echo "gen-traefik-wrapper.sh: could not download $lego_module@$lego_version" >&2; exit 1; }
	# Left out only while the package is the one generated file and Traefik uses only that function from it.
	mapfile -t dns_files < <(cd "$lego_src/providers/dns" && ls -- *.go | grep -v '_test\.go$')
	[[ ${dns_files[*]} == zz_gen_dns_providers.go ]] ||
		{ echo "gen-traefik-wrapper.sh: $lego_module/providers/dns is not the one generated file: ${dns_files[*]}" >&2; exit 1; }
	[[ $(grep -c '^func ' "$lego_src/providers/dns/zz_gen_dns_providers.go") == 1 ]] &&
		grep -qx 'func NewDNSChallengeProviderByName(name string) (challenge.Provider, error) {' \
			"$lego_src/providers/dns/zz_gen_dns_providers.go" ||
		{ echo "gen-traefik-wrapper.sh: $lego_module/providers/dns declares more than NewDNSChallengeProviderByName" >&2; exit 1; }
	mapfile -t dns_uses < <(grep -rlF --include='*.go' "\"$lego_module/providers/dns\"" "$src" | grep -v '_test\.go$' |
		xargs -r grep -ohE '\bdns\.[A-Z][A-Za-z0-9_]*' | sort -u)
	[[ ${dns_uses[*]} == dns.NewDNSChallengeProviderByName || ${#dns_uses[@]} == 0 ]] ||
		{ echo "gen-traefik-wrapper.sh: Traefik uses more of $lego_module/providers/dns: ${dns_uses[*]}" >&2; exit 1; }
fi

mkdir -p "$out"
{
	echo "// Generated by tools/kube/gen-traefik-wrapper.sh from $module@$version's go.mod. Do not edit."
	echo "module scriptorium.dev/traefik-wrapper"
	echo
	echo "$go_line"
	[[ -z $godebug ]] || printf '\n%s\n' "$godebug"
	echo
	echo "require $module $version"
	if ((${#forks[@]})) || [[ -n $ext_module || -n $lego_src ]]; then
		echo
		echo "replace ("
		[[ -z $ext_module ]] || printf '\t%s => ./ext\n' "$ext_module"
		[[ -z $lego_src ]] || printf '\t%s => ./lego\n' "$lego_module"
		for line in "${forks[@]}"; do printf '\t%s\n' "$line"; done
		echo ")"
	fi
	[[ -z $exclude ]] || printf '\n%s\n' "$exclude"
} >"$out/go.mod"

rm -rf "$out/ext"
if [[ -n $ext_module ]]; then
	# The names Traefik uses from the module: `ext.Name` in every file that imports it.
	mapfile -t importers < <(grep -rlF --include='*.go' "\"$ext_module\"" "$src" | grep -v '_test\.go$' || true)
	((${#importers[@]})) || { echo "gen-traefik-wrapper.sh: no file of $module@$version imports $ext_module" >&2; exit 1; }
	mapfile -t names < <(grep -ohE '\bext\.[A-Z][A-Za-z0-9_]*' "${importers[@]}" | cut -d. -f2 | sort -u)
	((${#names[@]})) || { echo "gen-traefik-wrapper.sh: no name of $ext_module is used" >&2; exit 1; }
	mkdir -p "$out/ext"
	printf 'module %s\n\n%s\n' "$ext_module" "$go_line" >"$out/ext/go.mod"
	{
		echo "// Generated by tools/kube/gen-traefik-wrapper.sh. Do not edit."
		echo
		echo "// Package ext holds Traefik's extension points of its dynamic configuration, empty in its open-source build."
		echo "package ext"
		for name in "${names[@]}"; do
			printf '\n// %s is embedded inline in the dynamic configuration; it adds nothing here.\ntype %s struct{}\n' "$name" "$name"
		done
	} >"$out/ext/ext.go"
fi

rm -rf "$out/lego"
if [[ -n $lego_src ]]; then
	cp -R "$lego_src" "$out/lego"
	chmod -R u+w "$out/lego"
	printf '%s\n' \
		"// Generated by tools/kube/gen-traefik-wrapper.sh in place of lego's list of DNS-01 providers. Do not edit." \
		'' 'package dns' '' 'import (' $'\t"fmt"' '' $'\t"github.com/go-acme/lego/v4/challenge"' ')' '' \
		'// NewDNSChallengeProviderByName knows no provider: this build leaves lego'"'"'s DNS-01 providers out.' \
		'func NewDNSChallengeProviderByName(name string) (challenge.Provider, error) {' \
		$'\treturn nil, fmt.Errorf("unrecognized DNS provider: %s (this Traefik is built without DNS-01 providers)", name)' \
		'}' >"$out/lego/providers/dns/zz_gen_dns_providers.go"
fi
