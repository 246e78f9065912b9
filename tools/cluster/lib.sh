# Shared settings of tools/cluster/{up,down,check-firewall}.sh (sourced, not run).
# shellcheck shell=bash

cluster_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/kube/versions.env
source "$cluster_here/../kube/versions.env"

CACHE=${SCRIPTORIUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scriptorium}
KUBE_BIN="$CACHE/kube/$KUBE_VERSION/bin"
IMAGES="$CACHE/cluster/images"
# kubectl of the cluster's version (tools/kube/build.sh --node), not the machine's older one.
KUBECTL="$KUBE_BIN/kubectl"

# Everything the cluster writes: data (removed by down.sh) and runtime state (sockets, pid files).
STATE=${SCRIPTORIUM_CLUSTER_STATE:-/var/lib/scriptorium-cluster}
RUN=${SCRIPTORIUM_CLUSTER_RUN:-/run/scriptorium-cluster}
PKI="$STATE/pki"
LOGS="$STATE/logs"
KUBECONFIG_ADMIN="$STATE/admin.kubeconfig"
CONTAINERD_SOCK="$RUN/containerd/containerd.sock"
# containerd's root (its images, unpacked) outlives the cluster, in the cache: a cluster that comes up again imports
# only the image archives that changed since (up.sh), not a gigabyte of images each time (half a minute of a CI run's
# end-to-end stage, and as long again to delete). down.sh removes the containers, never the images; remove this folder
# to start from none.
IMAGE_STORE=${SCRIPTORIUM_CLUSTER_IMAGE_STORE:-$CACHE/cluster/containerd}
# The local PersistentVolumes of the default StorageClass `local` (up.sh), one folder each.
VOLUMES="$STATE/volumes"
PV_COUNT=${SCRIPTORIUM_CLUSTER_PVS:-16}
PV_SIZE=2Gi

POD_CIDR=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/16
KUBERNETES_SVC_IP=10.96.0.1
DNS_SVC_IP=10.96.0.10
CLUSTER_DOMAIN=cluster.local
BRIDGE=scrbr0
APISERVER_PORT=6443
ETCD_CLIENT_PORT=12379
ETCD_PEER_PORT=12380
FW_CHAIN=SCRIPTORIUM-EGRESS
SANDBOX_IMAGE=localhost/scriptorium/pause:1
COREDNS_IMAGE=localhost/scriptorium/coredns:$COREDNS_VERSION
# The ingress controller (deploy/traefik.yaml, image built from source) and where the host reaches its HTTP entry
# point: the pod's host port 80 (the CNI portmap plugin; kube-proxy's route_localnet lets it answer on loopback).
TRAEFIK_IMAGE=localhost/scriptorium/traefik:$TRAEFIK_VERSION
INGRESS_ADDRESS=127.0.0.1:80

NODE_NAME=$(hostname | tr '[:upper:]' '[:lower:]')
# The interface and address of the default route: pods reach the API server there, and nothing
# from the pod or service ranges may leave through it.
DEFAULT_IF=$(ip -4 route show default | awk '{for (i = 1; i < NF; i++) if ($i == "dev") { print $(i + 1); exit }}')
NODE_IP=$(ip -4 -o addr show dev "$DEFAULT_IF" 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -1)

clog() { echo "cluster: $*" >&2; }
die() { clog "$*"; exit 1; }

# pid_alive NAME: the process recorded in $RUN/pids/NAME.pid is running.
pid_alive() {
	local f="$RUN/pids/$1.pid"
	[[ -f $f ]] && kill -0 "$(<"$f")" 2>/dev/null
}

# The egress firewall lives in the mangle table, whose FORWARD and POSTROUTING hooks run before the
# filter and nat rules kube-proxy and the CNI plugins add (so none of their ACCEPTs can bypass it),
# and POSTROUTING sees forwarded and host-originated packets alike, after DNAT, with the output
# interface known.
FW_HOOKS="FORWARD POSTROUTING"

# fw_check: the egress firewall is in place (exit 0) or not (prints what is missing, exit 1).
fw_check() {
	local ok=0 range hook
	for range in "$POD_CIDR" "$SERVICE_CIDR"; do
		iptables -w -t mangle -C "$FW_CHAIN" -s "$range" -o "$DEFAULT_IF" -j DROP 2>/dev/null ||
			{ clog "firewall: missing: $FW_CHAIN -s $range -o $DEFAULT_IF -j DROP"; ok=1; }
		iptables -w -t mangle -C "$FW_CHAIN" -d "$range" -o "$DEFAULT_IF" -j DROP 2>/dev/null ||
			{ clog "firewall: missing: $FW_CHAIN -d $range -o $DEFAULT_IF -j DROP"; ok=1; }
	done
	for hook in $FW_HOOKS; do
		# The jump must come first in its hook.
		[[ $(iptables -w -t mangle -S "$hook" 2>/dev/null | sed -n 2p) == "-A $hook -j $FW_CHAIN" ]] ||
			{ clog "firewall: $hook does not jump to $FW_CHAIN first"; ok=1; }
	done
	return $ok
}
