#!/usr/bin/env bash
# `make cluster-up`: a real single-node Kubernetes cluster on this machine, no container engine,
# no registry. etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd (CRI),
# kubelet (cgroupfs), kube-proxy (iptables) run as host processes; CoreDNS runs as a Deployment;
# pods sit on a CNI bridge; Traefik (deploy/traefik.yaml) is the ingress controller on host port 80.
# Idempotent: pieces already running are kept. Prints the kubeconfig path.
# Then, unless DEMO=0, deploys the demo (tools/cluster/demo.sh: the operator, PostgreSQL, both samples).
# Undo everything with tools/cluster/down.sh (`make cluster-down`). Root only.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

[[ $(id -u) == 0 ]] || die "must run as root"
[[ -n $DEFAULT_IF && -n $NODE_IP ]] || die "no default route: cannot tell the node address"

# --- Host packages -------------------------------------------------------------------------------
need=()
for pair in containerd:containerd runc:runc iptables:iptables conntrack:conntrack socat:socat \
	buildah:buildah debootstrap:debootstrap; do
	command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
done
[[ -x /usr/lib/cni/bridge ]] || need+=(containernetworking-plugins)
if ((${#need[@]})); then
	clog "installing ${need[*]}"
	apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}"
fi

# --- Binaries and images -------------------------------------------------------------------------
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl coredns traefik; do
	[[ -x $KUBE_BIN/$b ]] || { clog "building the Kubernetes binaries (tools/kube/build.sh --node)"; bash "$cluster_here/../kube/build.sh" --node >/dev/null; break; }
done
# The demo (below) runs the project's images: images.sh rebuilds those whose inputs changed (a hash check
# when nothing did). Without the demo, only missing base images are built.
if [[ ${DEMO:-1} != 0 ]]; then
	bash "$cluster_here/images.sh" >/dev/null
else
	for i in pause coredns traefik; do
		[[ -f $IMAGES/$i.oci.tar ]] || { clog "building the base images (tools/cluster/images.sh --base)"; bash "$cluster_here/images.sh" --base >/dev/null; break; }
	done
fi

mkdir -p "$STATE" "$RUN/pids" "$PKI" "$LOGS"
exec 8>"$RUN/up.lock"
flock 8

# --- Host settings (recorded once, restored by down.sh) -----------------------------------------
[[ -f $STATE/host-settings ]] || {
	echo "ip_forward=$(</proc/sys/net/ipv4/ip_forward)"
	echo "bridge_nf=$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo none)"
	echo "netns_before=$(ls /run/netns 2>/dev/null | tr '\n' ' ')"
} >"$STATE/host-settings"
[[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]] || modprobe br_netfilter 2>/dev/null ||
	die "the bridge netfilter hooks (br_netfilter) are missing: service traffic between pods cannot work"
echo 1 >/proc/sys/net/ipv4/ip_forward
echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables

# --- Egress firewall: nothing from the pod or service ranges leaves by the default route --------
iptables -w -t mangle -N "$FW_CHAIN" 2>/dev/null || true
for range in "$POD_CIDR" "$SERVICE_CIDR"; do
	for dir in -s -d; do
		iptables -w -t mangle -C "$FW_CHAIN" "$dir" "$range" -o "$DEFAULT_IF" -j DROP 2>/dev/null ||
			iptables -w -t mangle -A "$FW_CHAIN" "$dir" "$range" -o "$DEFAULT_IF" -j DROP
	done
done
for hook in $FW_HOOKS; do
	while iptables -w -t mangle -D "$hook" -j "$FW_CHAIN" 2>/dev/null; do :; done
	iptables -w -t mangle -I "$hook" 1 -j "$FW_CHAIN"
done
fw_check || die "the egress firewall is not in place"
clog "egress firewall in place (iptables -t mangle -S $FW_CHAIN)"

# --- Certificates --------------------------------------------------------------------------------
# cert NAME CN O [SANS]: a key and a certificate signed by the cluster CA.
cert() {
	local name=$1 cn=$2 o=$3 sans=${4:-}
	[[ -f $PKI/$name.crt ]] && return
	local subj="/CN=$cn"
	[[ -z $o ]] || subj="/O=$o$subj"
	openssl req -new -newkey rsa:2048 -nodes -keyout "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
	local ext="$PKI/$name.ext"
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		if [[ -n $sans ]]; then echo "extendedKeyUsage=serverAuth,clientAuth"; echo "subjectAltName=$sans"; else echo "extendedKeyUsage=clientAuth"; fi
	} >"$ext"
	openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 365 -sha256 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
	rm -f "$PKI/$name.csr" "$ext"
	chmod 600 "$PKI/$name.key"
}
if [[ ! -f $PKI/ca.crt ]]; then
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -subj "/CN=scriptorium-cluster-ca" \
		-days 365 -sha256 -addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" -out "$PKI/ca.crt" 2>/dev/null
	openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
	openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
	chmod 600 "$PKI/ca.key" "$PKI/sa.key"
fi
cert apiserver kube-apiserver "" \
	"DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.$CLUSTER_DOMAIN,DNS:localhost,DNS:$NODE_NAME,IP:127.0.0.1,IP:$NODE_IP,IP:$KUBERNETES_SVC_IP"
cert admin scriptorium-admin system:masters
cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
cert controller-manager system:kube-controller-manager ""
cert scheduler system:kube-scheduler ""
cert kubelet "system:node:$NODE_NAME" system:nodes "DNS:$NODE_NAME,IP:$NODE_IP,IP:127.0.0.1"
cert kube-proxy system:kube-proxy ""

# kubeconfig NAME: a kubeconfig with the NAME client certificate.
kubeconfig() {
	local f="$STATE/$1.kubeconfig"
	[[ -f $f ]] && return
	cat >"$f" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: scriptorium
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $PKI/ca.crt
users:
- name: $1
  user:
    client-certificate: $PKI/$1.crt
    client-key: $PKI/$1.key
contexts:
- name: scriptorium
  context: {cluster: scriptorium, user: $1}
current-context: scriptorium
EOF
	chmod 600 "$f"
}
for k in admin controller-manager scheduler kubelet kube-proxy; do kubeconfig "$k"; done

# --- Processes -----------------------------------------------------------------------------------
# start NAME CMD...: run CMD in its own session, logging to $LOGS/NAME.log, unless already running.
start() {
	local name=$1; shift
	if pid_alive "$name"; then return; fi
	# The daemon keeps no descriptor but stdin/out/err: neither this script's lock nor one its caller holds
	# (`flock FILE make cluster-up`) may live on in it.
	(
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			((fd > 2)) && eval "exec $fd>&-" 2>/dev/null
		done
		exec setsid "$@" >>"$LOGS/$name.log" 2>&1 </dev/null
	) &
	echo $! >"$RUN/pids/$name.pid"
	clog "started $name (pid $!, log $LOGS/$name.log)"
}
# wait_for WHAT SECONDS CMD...: retry CMD until it succeeds.
wait_for() {
	local what=$1 seconds=$2 i; shift 2
	for ((i = 0; i < seconds; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 1
	done
	die "$what not ready after ${seconds}s (logs: $LOGS)"
}
k() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
# put FILE: write stdin to FILE only when it differs. kube-proxy watches its config file and exits
# when it is written, even with the same content, so a second cluster-up must leave it untouched.
put() {
	local tmp="$1.new"
	cat >"$tmp"
	if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; fi
}

start etcd "$KUBE_BIN/etcd" --name "$NODE_NAME" --data-dir "$STATE/etcd" \
	--listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
	--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
	--initial-cluster "$NODE_NAME=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
	--unsafe-no-fsync --quota-backend-bytes 2147483648
wait_for etcd 60 curl -fsS "http://127.0.0.1:$ETCD_CLIENT_PORT/health"

start kube-apiserver "$KUBE_BIN/kube-apiserver" \
	--etcd-servers "http://127.0.0.1:$ETCD_CLIENT_PORT" \
	--bind-address 0.0.0.0 --secure-port "$APISERVER_PORT" --advertise-address "$NODE_IP" \
	--tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
	--client-ca-file "$PKI/ca.crt" \
	--kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
	--kubelet-preferred-address-types InternalIP,Hostname \
	--service-cluster-ip-range "$SERVICE_CIDR" \
	--service-account-issuer "https://kubernetes.default.svc.$CLUSTER_DOMAIN" \
	--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
	--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
	--allow-privileged=true --profiling=false
wait_for kube-apiserver 120 k get --raw /readyz

start kube-controller-manager "$KUBE_BIN/kube-controller-manager" \
	--kubeconfig "$STATE/controller-manager.kubeconfig" \
	--authentication-kubeconfig "$STATE/controller-manager.kubeconfig" \
	--authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
	--bind-address 127.0.0.1 --leader-elect=false \
	--service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
	--use-service-account-credentials --service-cluster-ip-range "$SERVICE_CIDR" \
	--cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
	--controllers '*,-nodeipam' --profiling=false
start kube-scheduler "$KUBE_BIN/kube-scheduler" \
	--kubeconfig "$STATE/scheduler.kubeconfig" \
	--authentication-kubeconfig "$STATE/scheduler.kubeconfig" \
	--authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
	--bind-address 127.0.0.1 --leader-elect=false --profiling=false

# CAP_SYS_RESOURCE is bit 24 of the capability sets.
restrict_oom=false
(( (0x$(awk '/^CapEff/ {print $2}' /proc/self/status) >> 24) & 1 )) || restrict_oom=true

# containerd, our own instance (own root, state and socket), with the CRI plugin.
mkdir -p "$IMAGE_STORE" "$RUN/containerd" "$STATE/cni/net.d" "$STATE/cni/ipam"
put "$STATE/containerd.toml" <<EOF
version = 2
root = "$IMAGE_STORE"
state = "$RUN/containerd"
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"
[debug]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$SANDBOX_IMAGE"
  enable_selinux = false
  # Root here may lack CAP_SYS_RESOURCE (this Firecracker VM does): then no process can lower its
  # oom_score_adj, and runc fails on the sandbox's -998 ("can't get final child's PID from pipe").
  # This keeps each container's score at least containerd's own instead.
  restrict_oom_score_adj = $restrict_oom
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUN/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
EOF
put "$STATE/cni/net.d/10-scriptorium.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "scriptorium",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$POD_CIDR" }]],
        "routes": [{ "dst": "0.0.0.0/0" }],
        "dataDir": "$STATE/cni/ipam"
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF
containerd_was_up=no
pid_alive containerd && containerd_was_up=yes
containerd_log_from=$(($(stat -c %s "$LOGS/containerd.log" 2>/dev/null || echo 0) + 1))
start containerd containerd --config "$STATE/containerd.toml"
wait_for containerd 60 ctr --address "$CONTAINERD_SOCK" version
# Its CRI plugin answers only once it has recovered the state of the image store (kept across clusters), a moment
# after the socket does; a kubelet whose first CRI call fails exits ("validate CRI v1 runtime API"), and the node
# then never registers. The plugin logs "Start streaming server" as the last step before it serves.
if [[ $containerd_was_up == no ]]; then
	wait_for "containerd's CRI plugin" 60 \
		bash -c 'tail -c "+$1" "$2" | grep -q "Start streaming server"' _ "$containerd_log_from" "$LOGS/containerd.log"
fi

# Images: import each OCI archive once per containerd root (IMAGE_STORE, kept across clusters): again only when it
# changed.
for archive in "$IMAGES"/*.oci.tar; do
	stamp="$IMAGE_STORE/.imported-$(basename "$archive")"
	[[ -f $stamp && ! $archive -nt $stamp ]] && continue
	clog "importing $(basename "$archive") into containerd (k8s.io)"
	ctr --address "$CONTAINERD_SOCK" -n k8s.io images import "$archive" >/dev/null
	touch "$stamp"
done

put "$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
clusterDomain: $CLUSTER_DOMAIN
clusterDNS: [$DNS_SVC_IP]
resolvConf: /etc/resolv.conf
tlsCertFile: $PKI/kubelet.crt
tlsPrivateKeyFile: $PKI/kubelet.key
rotateCertificates: false
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
maxPods: 60
EOF
start kubelet "$KUBE_BIN/kubelet" --config "$STATE/kubelet.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
	--root-dir "$STATE/kubelet" --cert-dir "$PKI" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v 1

put "$STATE/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $STATE/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
bindAddress: 0.0.0.0
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack: {maxPerCore: 0}
EOF
start kube-proxy "$KUBE_BIN/kube-proxy" --config "$STATE/kube-proxy.yaml"

clog "waiting for node $NODE_NAME to be Ready"
wait_for "node $NODE_NAME" 180 k wait --for=condition=Ready "node/$NODE_NAME" --timeout=1s

# --- CoreDNS -------------------------------------------------------------------------------------
sed -e "s#@COREDNS_IMAGE@#$COREDNS_IMAGE#g" -e "s#@DNS_SVC_IP@#$DNS_SVC_IP#g" -e "s#@CLUSTER_DOMAIN@#$CLUSTER_DOMAIN#g" \
	"$cluster_here/coredns.yaml" | k apply -f - >/dev/null
wait_for "CoreDNS" 180 k -n kube-system rollout status deployment/coredns --timeout=1s
dns_check() {
	node -e '
		const { Resolver } = require("node:dns").promises;
		const r = new Resolver({ timeout: 1000, tries: 1 });
		r.setServers([process.argv[1]]);
		r.resolve4(process.argv[2]).then((a) => { console.log(a.join(",")); process.exit(a.includes(process.argv[3]) ? 0 : 1); }, () => process.exit(1));
	' "$DNS_SVC_IP" "kubernetes.default.svc.$CLUSTER_DOMAIN" "$KUBERNETES_SVC_IP"
}
wait_for "cluster DNS (kubernetes.default.svc.$CLUSTER_DOMAIN via $DNS_SVC_IP)" 120 dns_check
# --- Storage: a default StorageClass `local` and a pool of local PersistentVolumes ---------------
# No provisioner binary: the class is `kubernetes.io/no-provisioner` with WaitForFirstConsumer, and
# up.sh keeps a pool of $PV_COUNT local volumes (folders under $VOLUMES). A claim binds one when its
# pod is scheduled; the reclaim policy is Retain, so a deleted claim leaves its volume Released, and
# each cluster-up wipes the folder of every Released volume and makes it Available again.
mkdir -p "$VOLUMES"
k apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
  labels: {app.kubernetes.io/part-of: scriptorium-cluster}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
EOF
for pv in $(k get pv -l app.kubernetes.io/part-of=scriptorium-cluster \
	-o jsonpath='{range .items[?(@.status.phase=="Released")]}{.metadata.name}{"\n"}{end}'); do
	rm -rf "${VOLUMES:?}/$pv" && mkdir -m 0777 "$VOLUMES/$pv"
	k patch pv "$pv" --type=json -p '[{"op":"remove","path":"/spec/claimRef"}]' >/dev/null
	clog "recycled volume $pv (folder wiped, Available again)"
done
existing=" $(k get pv -l app.kubernetes.io/part-of=scriptorium-cluster -o jsonpath='{.items[*].metadata.name}') "
for ((i = 1; i <= PV_COUNT; i++)); do
	pv=$(printf 'local-pv-%02d' "$i")
	[[ $existing == *" $pv "* ]] && continue
	# 0777: the pods run as various non-root users; the folder's parent is root's 0755 state folder.
	[[ -d $VOLUMES/$pv ]] || mkdir -m 0777 "$VOLUMES/$pv"
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $pv
  labels: {app.kubernetes.io/part-of: scriptorium-cluster}
spec:
  capacity: {storage: $PV_SIZE}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local
  volumeMode: Filesystem
  local: {path: $VOLUMES/$pv}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$NODE_NAME]}]
EOF
done
clog "storage: default StorageClass local; $(k get pv -l app.kubernetes.io/part-of=scriptorium-cluster --no-headers | grep -c ' Available ') of $PV_COUNT local volumes Available"

# --- Ingress controller: Traefik with IngressClass traefik (the default), host ports 80 and 443 -------
# deploy/traefik.yaml names upstream's image; here it is the same version built from source (images.sh).
k label node "$NODE_NAME" ingress-ready=true --overwrite >/dev/null
upstream_traefik="docker.io/library/traefik:$TRAEFIK_VERSION"
grep -q "image: $upstream_traefik$" "$cluster_here/../../deploy/traefik.yaml" ||
	die "deploy/traefik.yaml does not name $upstream_traefik (TRAEFIK_VERSION in tools/kube/versions.env)"
sed "s#image: $upstream_traefik\$#image: $TRAEFIK_IMAGE#" "$cluster_here/../../deploy/traefik.yaml" | k apply -f - >/dev/null
wait_for "the ingress controller (deployment/traefik in namespace traefik)" 180 \
	k -n traefik rollout status deployment/traefik --timeout=1s
# ingress_check: the controller answers on the host, with its own 404 for a host no Ingress names.
ingress_check() {
	[[ $(curl -s -o /dev/null -w '%{http_code}' -H 'Host: cluster-up.invalid' "http://$INGRESS_ADDRESS/") == 404 ]]
}
wait_for "the ingress controller on http://$INGRESS_ADDRESS" 60 ingress_check

fw_check || die "the egress firewall is not in place"

clog "ready: node $NODE_NAME Ready, cluster DNS answers, ingress controller on http://$INGRESS_ADDRESS"
if [[ ${DEMO:-1} != 0 ]]; then
	# 8>&-: helm and kubectl must not hold this script's lock.
	bash "$cluster_here/demo.sh" 8>&-
fi
clog "kubectl: $KUBECTL --kubeconfig $KUBECONFIG_ADMIN get pods -A"
echo "$KUBECONFIG_ADMIN"
