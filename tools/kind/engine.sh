#!/usr/bin/env bash
# A Docker engine for kind on this kind of machine (root, no systemd, cgroup v1, no CAP_SYS_RESOURCE):
#   bash tools/kind/engine.sh start    # install Debian's docker.io if missing, start dockerd (idempotent); its
#                                      # containers' CPU weight is ENGINE_CPU_WEIGHT (default 1024; CI's prebuild: 2)
#   bash tools/kind/engine.sh stop     # stop the dockerd this script started (containers stop with it)
#   bash tools/kind/engine.sh status
#   bash tools/kind/engine.sh priority # the engine and everything it runs back to the normal CPU and I/O priority
# dockerd runs with tools/kind/runc-wrapper.sh as its default runtime (privileged containers ask for every
# capability; the wrapper removes the one this sandbox's root does not have), its own state under
# /var/lib/scriptorium-docker and /run/scriptorium-docker, its log beside them, and --ip-forward=false (it never
# flips the host's forwarding or FORWARD policy under the local cluster). A DOCKER-USER rule drops anything
# the containers would send out of the default route's interface: kind nodes and their pods reach nothing outside
# the machine. Root only.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${SCRIPTORIUM_DOCKER_STATE:-/var/lib/scriptorium-docker}
RUN=${SCRIPTORIUM_DOCKER_RUN:-/run/scriptorium-docker}
SOCK=$RUN/docker.sock
export DOCKER_HOST=unix://$SOCK
log() { echo "engine: $*" >&2; }
[[ $(id -u) == 0 ]] || { log "must run as root"; exit 1; }

answering() { docker info >/dev/null 2>&1; }

firewall() {
	local default_if
	default_if=$(ip -4 route show default | awk '{for (i = 1; i < NF; i++) if ($i == "dev") { print $(i + 1); exit }}')
	[[ -n $default_if ]] || return 0
	iptables -w -N DOCKER-USER 2>/dev/null || true
	iptables -w -C DOCKER-USER -o "$default_if" -j DROP 2>/dev/null ||
		iptables -w -I DOCKER-USER 1 -o "$default_if" -j DROP
}

start() {
	if answering; then firewall; log "dockerd answers at $SOCK"; return 0; fi
	if ! command -v dockerd >/dev/null; then
		log "installing docker.io (Debian)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -qq --no-install-recommends docker.io jq >/dev/null 2>&1 ||
			{ apt-get update -qq && apt-get install -y -qq --no-install-recommends docker.io jq >/dev/null; }
	fi
	command -v jq >/dev/null || apt-get install -y -qq --no-install-recommends jq >/dev/null
	mkdir -p "$STATE" "$RUN"
	# Debian's package ships the client too; a newer static client elsewhere on PATH works the same.
	# Started with no descriptor but stdin/out/err: a lock held by whoever runs this script (flock's) must not
	# live on in the daemon.
	(
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			((fd > 2)) && eval "exec $fd>&-" 2>/dev/null
		done
		exec nohup dockerd --data-root "$STATE/data" --exec-root "$RUN/exec" --pidfile "$RUN/dockerd.pid" \
			--host "unix://$SOCK" --add-runtime "scriptorium-runc=$here/runc-wrapper.sh" \
			--default-runtime scriptorium-runc --ip-forward=false --log-level warn \
			>"$STATE/dockerd.log" 2>&1 </dev/null
	) &
	local i
	for ((i = 0; i < 120; i++)); do
		answering && break
		sleep 0.5
	done
	answering || { tail -20 "$STATE/dockerd.log" >&2; log "dockerd did not answer"; exit 1; }
	firewall
	log "dockerd $(docker info --format '{{.ServerVersion}}') answers at $SOCK (cgroup driver $(docker info --format '{{.CgroupDriver}}'), runtime scriptorium-runc)"
}

# The containers (kind's nodes and everything in them) are scheduled as one group, the cgroup dockerd puts them under
# (cgroupfs driver, cgroup v1: docker); nice does not rank them against processes outside it (runc starts each
# container in a session, and so an autogroup, of its own), so the group's CPU weight does: the least (2 of the
# default 1024) while CI's prebuild prepares kind beside the integration stage, the default otherwise. The prebuild
# exports ENGINE_CPU_WEIGHT=2, so every start it makes (its own and deploy/e2e-kind.sh's) keeps the least weight;
# any other start sets the default again.
CPU_GROUP=/sys/fs/cgroup/cpu/docker
group_weight() {
	[[ -d ${CPU_GROUP%/*} ]] || { log "no cgroup v1 cpu controller: the containers' CPU weight is left as it is"; return 0; }
	mkdir -p "$CPU_GROUP" && echo "$1" >"$CPU_GROUP/cpu.shares" || log "could not set $CPU_GROUP/cpu.shares"
}

# CI's prebuild starts the engine, and kind's cluster in it, at the lowest CPU and I/O priority beside the integration
# stage; what it starts inherits that (kind's nodes, their pods). Once kind's suite runs, nothing is to be yielded to:
# dockerd, its containerd and shims, and every process of its containers' cgroups, each thread (priorities are per
# thread on Linux), are given the normal priority again.
priority() {
	local dockerd pid ppid args task n=0
	[[ -f $RUN/dockerd.pid ]] || { log "no dockerd of ours"; return 0; }
	dockerd=$(<"$RUN/dockerd.pid")
	while read -r pid ppid args; do
		# dockerd, its containerd, its shims (namespace moby: the local cluster's containerd uses k8s.io; a shim's
		# parent is init) and the processes of its containers' cgroups.
		[[ $pid == "$dockerd" || $ppid == "$dockerd" || $args == *containerd-shim*" -namespace moby "* ]] ||
			grep -q ':/docker/' "/proc/$pid/cgroup" 2>/dev/null || continue
		for task in /proc/"$pid"/task/*; do
			renice -n 0 -p "${task##*/}" >/dev/null 2>&1 && ionice -c 2 -n 4 -p "${task##*/}" 2>/dev/null && n=$((n + 1))
		done
	done < <(ps -e -o pid=,ppid=,args=)
	group_weight 1024
	# dockerd began in the prebuild's session, whose autogroup had the lowest weight.
	echo 0 >"/proc/$dockerd/autogroup" 2>/dev/null || true
	log "normal priority for the engine and its containers ($n threads)"
}

stop() {
	local pid
	[[ -f $RUN/dockerd.pid ]] || { log "no dockerd of ours"; return 0; }
	pid=$(<"$RUN/dockerd.pid")
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid"
		for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$RUN/dockerd.pid"
	log "dockerd stopped"
}

case ${1:-} in
start) group_weight "${ENGINE_CPU_WEIGHT:-1024}" && start ;;
stop) stop ;;
priority) priority ;;
status) if answering; then docker info --format '{{.ServerVersion}} {{.Containers}} containers'; else echo "not running"; exit 1; fi ;;
env) echo "export DOCKER_HOST=$DOCKER_HOST" ;;
*) echo "usage: engine.sh start|stop|status|priority|env" >&2; exit 2 ;;
esac
