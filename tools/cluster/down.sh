#!/usr/bin/env bash
# `make cluster-down`: remove everything tools/cluster/up.sh made: its processes (and the
# container shims and containers of its containerd), mounts, network namespaces, iptables rules
# and chains, the CNI bridge, cgroups and data folders (the data folder's files in the background), and restore the
# host settings it changed. Safe to run twice, or when nothing is up. Root only.
set -uo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
[[ $(id -u) == 0 ]] || die "must run as root"

# stop NAME...: SIGTERM the recorded processes together, then SIGKILL what is still running after 15 s.
stop() {
	local name f pid i pids=() names=()
	for name in "$@"; do
		f="$RUN/pids/$name.pid"
		[[ -f $f ]] || continue
		pid=$(<"$f")
		rm -f "$f"
		kill -0 "$pid" 2>/dev/null || continue
		kill "$pid" 2>/dev/null
		pids+=("$pid") names+=("$name")
	done
	for ((i = 0; i < 150; i++)); do
		local alive=0
		for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
		((alive)) || break
		sleep 0.1
	done
	for i in "${!pids[@]}"; do
		kill -9 "${pids[$i]}" 2>/dev/null && clog "killed ${names[$i]} (pid ${pids[$i]})"
		clog "stopped ${names[$i]} (pid ${pids[$i]})"
	done
}

# Pods first, while the kubelet and containerd still run, so CNI DEL removes each pod's veth and netns
# (bounded: controllers recreate pods; whatever is left is removed below with its netns).
if pid_alive kube-apiserver && pid_alive kubelet; then
	"$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" delete pods --all -A --grace-period=5 --wait=true --timeout=20s >/dev/null 2>&1 || true
fi
stop kube-controller-manager kube-scheduler kubelet kube-proxy
# Whatever containers are left: kill their tasks through containerd, then remove them.
if pid_alive containerd; then
	c() { ctr --address "$CONTAINERD_SOCK" -n k8s.io "$@"; }
	for t in $(c tasks ls -q 2>/dev/null); do c tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
	sleep 1
	for t in $(c tasks ls -q 2>/dev/null); do c tasks delete -f "$t" >/dev/null 2>&1; done
	for t in $(c containers ls -q 2>/dev/null); do c containers delete "$t" >/dev/null 2>&1; done
fi
stop containerd
# containerd-shim-runc-v2 processes outlive containerd by design; ours name our socket.
for p in /proc/[0-9]*; do
	cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
	if [[ $cmd == *containerd-shim* && $cmd == *"$CONTAINERD_SOCK"* ]]; then
		kill -9 "${p#/proc/}" 2>/dev/null && clog "killed shim ${p#/proc/}"
	fi
done
stop kube-apiserver
stop etcd

# kube-proxy's own clean-up of its iptables rules, then anything left that kube-proxy, the kubelet,
# the CNI plugins or up.sh made: jumps from built-in chains first, then the chains themselves.
[[ -x $KUBE_BIN/kube-proxy ]] && "$KUBE_BIN/kube-proxy" --cleanup >/dev/null 2>&1
ours='^(KUBE-|CNI-|SCRIPTORIUM-)'
for table in filter nat mangle raw; do
	iptables -w -t "$table" -S 2>/dev/null | grep -E -- "^-A [A-Z]+ .*-j (KUBE-|CNI-|SCRIPTORIUM-)" | grep -vE -- '^-A (KUBE-|CNI-|SCRIPTORIUM-)' |
		while read -r rule; do
			# shellcheck disable=SC2086
			eval "iptables -w -t $table ${rule/-A /-D }" 2>/dev/null
		done
	for chain in $(iptables -w -t "$table" -S 2>/dev/null | awk '$1 == "-N" {print $2}' | grep -E "$ours"); do
		iptables -w -t "$table" -F "$chain" 2>/dev/null
	done
	for chain in $(iptables -w -t "$table" -S 2>/dev/null | awk '$1 == "-N" {print $2}' | grep -E "$ours"); do
		iptables -w -t "$table" -X "$chain" 2>/dev/null
	done
done
# Connection-tracking entries of the pod and service ranges.
for range in "$POD_CIDR" "$SERVICE_CIDR"; do
	conntrack -D -s "$range" >/dev/null 2>&1
	conntrack -D -d "$range" >/dev/null 2>&1
done

# Mounts under our folders (deepest first), then network namespaces the CRI made since up.sh ran.
for dir in "$STATE" "$RUN"; do
	awk -v d="$dir" '$2 == d || index($2, d "/") == 1 {print $2}' /proc/self/mounts | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null && clog "unmounted $m"; done
done
before=$(sed -n 's/^netns_before=//p' "$STATE/host-settings" 2>/dev/null)
for ns in /run/netns/cni-*; do
	[[ -e $ns ]] || continue
	[[ " $before " == *" $(basename "$ns") "* ]] && continue
	ip netns delete "$(basename "$ns")" 2>/dev/null || { umount -l "$ns" 2>/dev/null; rm -f "$ns"; }
	clog "removed network namespace $(basename "$ns")"
done
ip link show "$BRIDGE" >/dev/null 2>&1 && ip link delete "$BRIDGE" && clog "removed bridge $BRIDGE"

# The kubelet's cgroups (cgroupfs driver): /kubepods in every v1 hierarchy, deepest first.
for hier in /sys/fs/cgroup/*/; do
	[[ -d $hier/kubepods ]] || continue
	find "$hier/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null
done

# Host settings as they were before up.sh.
if [[ -f $STATE/host-settings ]]; then
	fwd=$(sed -n 's/^ip_forward=//p' "$STATE/host-settings")
	brnf=$(sed -n 's/^bridge_nf=//p' "$STATE/host-settings")
	[[ -n $fwd ]] && echo "$fwd" >/proc/sys/net/ipv4/ip_forward
	[[ $brnf == [01] ]] && echo "$brnf" >/proc/sys/net/bridge/bridge-nf-call-iptables
fi
# The data folder holds containerd's unpacked images (gigabytes of small files, half a minute to delete): it is renamed
# at once and removed in the background, so what comes next (CI's kind cluster) need not wait for the disk; up.sh
# starts from a new folder, and what an interrupted removal left is removed with the next one.
if [[ -d $STATE ]]; then
	mv "$STATE" "$STATE.removed.$$"
	(setsid rm -rf "$STATE".removed.* </dev/null >/dev/null 2>&1 &)
fi
rm -rf "$RUN"
# containerd 1.6 keeps shim sockets and ctr's fifos under /run/containerd whatever its state folder:
# remove those folders when they are empty (never anything another containerd still uses).
rmdir /run/containerd/s /run/containerd/fifo /run/containerd/runc/k8s.io /run/containerd/runc /run/containerd 2>/dev/null
clog "down: processes, mounts, network namespaces, iptables rules, bridge and $STATE removed"
