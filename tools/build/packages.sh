#!/usr/bin/env bash
# The Debian packages a whole CI run uses, installed in ONE apt transaction (one `apt-get update`) when any is
# missing, instead of one per stage. Each stage still checks its own (a developer runs them alone), so this only saves
# time. Prefer Debian's where it is recent enough; what is not comes from the Go module proxy or the npm registry
# (docs/operations.md, "What CI builds, and why not from Debian"). Root only; prints nothing when all are present.
#   make test:       postgresql (server binaries), openssl (test certificates), chromium (browser tests),
#                    util-linux (runuser, flock), curl, openssh-client (the ssh-agent litewitness signs through),
#                    PostGIS for that PostgreSQL (Scorpio's database), a JDK 17 and Maven (to build Scorpio, tools/scorpio)
#                    python3-venv (the fuzzer's virtual environment)
#   make e2e-local:  containerd, runc, iptables, conntrack, socat, containernetworking-plugins, buildah, debootstrap
#   make e2e-kind:   docker.io (the engine kind runs its nodes in), jq
set -euo pipefail
[[ $(id -u) == 0 ]] || { echo "packages: root only (apt-get)" >&2; exit 1; }
want=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || want+=(postgresql)
# PostGIS of the PostgreSQL major version the tests run (Debian's default when none is installed yet).
pg_major=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort -n | tail -1)
pg_major=${pg_major:-15}
[[ -f /usr/share/postgresql/$pg_major/extension/postgis.control ]] || want+=("postgresql-$pg_major-postgis-3")
for pair in java:openjdk-17-jdk-headless mvn:maven openssl:openssl chromium:chromium flock:util-linux curl:curl ssh-agent:openssh-client containerd:containerd runc:runc \
	iptables:iptables conntrack:conntrack socat:socat buildah:buildah debootstrap:debootstrap dockerd:docker.io jq:jq; do
	have_cmd "${pair%%:*}" || want+=("${pair#*:}")
done
[[ -x /usr/lib/cni/bridge ]] || want+=(containernetworking-plugins)
# Debian's python3 makes a virtual environment (with pip) only with python3-venv.
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || want+=(python3-venv)
((${#want[@]})) || exit 0
echo "packages: installing ${want[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
