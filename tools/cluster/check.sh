#!/usr/bin/env bash
# Check a running local cluster (tools/cluster/up.sh): the node is Ready, the egress firewall's
# rules are in place, and, from a real pod, cluster DNS answers while a connection to an address
# outside (the host's own resolver, reached by the default route) is dropped.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
k() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

k wait --for=condition=Ready "node/$NODE_NAME" --timeout=30s >/dev/null || die "check: node $NODE_NAME is not Ready"
fw_check || die "check: the egress firewall is not in place"
outside=$(awk '$1 == "nameserver" {print $2; exit}' /etc/resolv.conf)
[[ -n $outside ]] || outside=$(ip -4 route show default | awk '{print $3; exit}')
pod=cluster-check-$$
k delete pod "$pod" --ignore-not-found --wait=true >/dev/null
k run "$pod" --image=docker.io/library/node:24-bookworm-slim --image-pull-policy=Never --restart=Never \
	--command -- node -e '
const dns = require("node:dns").promises;
const net = require("node:net");
(async () => {
  const a = await dns.resolve4(process.argv[1]).catch((e) => e.code);
  console.log("dns " + JSON.stringify(a));
  const s = net.connect({ host: process.argv[2], port: 53, timeout: 3000 });
  s.on("connect", () => { console.log("egress open"); process.exit(0); });
  s.on("timeout", () => { console.log("egress dropped"); process.exit(0); });
  s.on("error", (e) => { console.log("egress error " + e.code); process.exit(0); });
})();' "kubernetes.default.svc.$CLUSTER_DOMAIN" "$outside" >/dev/null
for ((i = 0; i < 60; i++)); do
	phase=$(k get pod "$pod" -o jsonpath='{.status.phase}')
	[[ $phase == Succeeded || $phase == Failed ]] && break
	sleep 1
done
out=$(k logs "$pod" 2>&1 || true)
k delete pod "$pod" --wait=false >/dev/null
echo "$out"
[[ $out == *"dns [\"$KUBERNETES_SVC_IP\"]"* ]] || die "check: cluster DNS did not answer from a pod"
[[ $out == *"egress dropped"* ]] || die "check: a pod reached $outside through the default route"
clog "check: node Ready, firewall in place, DNS answers from a pod, egress to $outside dropped"
