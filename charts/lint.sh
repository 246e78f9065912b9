#!/usr/bin/env bash
# `make chart-lint`: check the operator chart the way a cluster would.
#   1. helm lint --strict, with the default values and the other value sets below;
#   2. values.schema.json refuses values that break the restricted Pod Security Standard;
#   3. helm template (CRDs included) | kubectl apply --server-side --dry-run=server, against a
#      real kube-apiserver started by packages/kube-testenv (or the one in CHART_LINT_KUBECONFIG);
#   4. helm install and uninstall for real (CRDs from crds/, every object created, then removed);
#      the rendered RBAC is applied for real and probed with `kubectl auth can-i` as the operator's
#      ServiceAccount: every permission the reconcilers need is granted, and nothing more broad;
#   5. deploy/samples/ validate against the CRDs (server-side dry-run, CEL rules included);
#   6. deploy/kustomize/base is not stale and passes the same server-side dry-run.
# Env: CHART_LINT_KUBECONFIG uses that cluster instead of starting one; CHART_LINT_CHART checks another copy of the chart.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
chart=${CHART_LINT_CHART:-$root/charts/scriptorium-operator}
ns=scriptorium-system
release=scriptorium

bin_dir=${SCRIPTORIUM_KUBE_BIN:-$(bash "$root/tools/kube/build.sh")}
helm="$bin_dir/helm"
[[ -x $helm ]] || { echo "chart-lint: $helm not found; run make kube-bins" >&2; exit 1; }
kubectl=${KUBECTL:-kubectl}
command -v "$kubectl" >/dev/null || { echo "chart-lint: kubectl not found on PATH" >&2; exit 1; }
work=$(mktemp -d)
cp_pid=

cleanup() {
	local code=$?
	if [[ -n $cp_pid ]]; then
		# Closing the control plane's stdin (and TERM as a backstop) makes it stop and clean up.
		exec {cp_in}>&- 2>/dev/null || true
		kill -TERM "$cp_pid" 2>/dev/null || true
		wait "$cp_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
	exit "$code"
}
trap cleanup EXIT
fail() { echo "chart-lint: FAIL: $*" >&2; exit 1; }

# Value sets: the defaults; an HA install from a private registry pinned by digest; a minimal one.
cat >"$work/ha.yaml" <<'VALUES'
replicaCount: 2
image: { registry: registry.example.com/platform, tag: "1.2.3", digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" }
imagePullSecrets: [{ name: regcred }]
operator: { watchNamespace: team-a, logLevel: debug }
nodeSelector: { kubernetes.io/os: linux }
tolerations: [{ key: dedicated, operator: Equal, value: platform, effect: NoSchedule }]
topologySpreadConstraints:
  - { maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: { matchLabels: { app.kubernetes.io/component: operator } } }
VALUES
cat >"$work/minimal.yaml" <<'VALUES'
leaderElection: { enabled: false, leaseName: scriptorium-operator }
metrics: { enabled: false }
serviceAccount: { create: false, name: default }
VALUES
value_sets=("" "$work/ha.yaml" "$work/minimal.yaml")
values_args() { [[ -z $1 ]] || printf -- '-f\n%s\n' "$1"; }

echo "chart-lint: helm lint"
for set in "${value_sets[@]}"; do
	mapfile -t args < <(values_args "$set")
	"$helm" lint --strict "$chart" --namespace "$ns" "${args[@]}" >"$work/lint.out" 2>&1 || { cat "$work/lint.out" >&2; fail "helm lint ${set:-(defaults)}"; }
done

echo "chart-lint: the values schema refuses unsafe values"
for bad in 'podSecurityContext.runAsNonRoot=false' 'securityContext.allowPrivilegeEscalation=true' \
	'image.pullPolicy=Sometimes' 'securityContext.capabilities.add={NET_ADMIN}' 'replicaCount=-1' 'unknownKey=1'; do
	if "$helm" template "$release" "$chart" --set "$bad" >/dev/null 2>&1; then fail "values.schema.json accepted --set $bad"; fi
done

echo "chart-lint: monitoring objects (off by default; ServiceMonitor, two PodMonitors, PrometheusRule when on)"
monitoring=(--set monitoring.serviceMonitor.enabled=true --set monitoring.podMonitors.enabled=true
	--set monitoring.prometheusRule.enabled=true --set-string monitoring.prometheusRule.labels.release=prometheus)
"$helm" lint --strict "$chart" --namespace "$ns" "${monitoring[@]}" >"$work/lint.out" 2>&1 ||
	{ cat "$work/lint.out" >&2; fail "helm lint with monitoring on"; }
"$helm" template "$release" "$chart" --namespace "$ns" "${monitoring[@]}" >"$work/monitoring.yaml"
for kind in ServiceMonitor PodMonitor PrometheusRule; do
	grep -q "^kind: $kind\$" "$work/monitoring.yaml" || fail "monitoring on: no $kind rendered"
done
[[ $(grep -c '^kind: PodMonitor$' "$work/monitoring.yaml") == 2 ]] || fail "monitoring on: expected 2 PodMonitors"
# The alert annotations reach Prometheus as written (Helm must not evaluate their {{ $labels }}).
grep -q 'summary: LedgerCluster {{ $labels.namespace }}/{{ $labels.name }}' "$work/monitoring.yaml" ||
	fail "the PrometheusRule lost its {{ \$labels }} templates"
if "$helm" template "$release" "$chart" | grep -qE '^kind: (ServiceMonitor|PodMonitor|PrometheusRule)$'; then
	fail "monitoring objects rendered with the default values"
fi

if [[ -n ${CHART_LINT_KUBECONFIG:-} ]]; then
	export KUBECONFIG=$CHART_LINT_KUBECONFIG
else
	echo "chart-lint: starting a test control plane (packages/kube-testenv)"
	# A coprocess: its stdin is a pipe from this script, so it stops even if this script is killed.
	coproc CP { SCRIPTORIUM_KUBE_BIN="$bin_dir" node "$root/packages/kube-testenv/src/cli.ts" --no-controller-manager --until-stdin-closes; }
	# shellcheck disable=SC2153 # CP_PID is set by coproc
	cp_pid=$CP_PID
	cp_in=${CP[1]}
	line=
	read -r -t 180 line <&"${CP[0]}" || true
	[[ $line == KUBECONFIG=* ]] || fail "the test control plane did not start (see the lines above)"
	export KUBECONFIG=${line#KUBECONFIG=}
fi

# The namespace enforces and warns on the restricted Pod Security Standard, so the API server
# reports any pod template of the chart that would break it.
"$kubectl" create namespace "$ns" --dry-run=client -o yaml | "$kubectl" apply --server-side -f - >/dev/null
"$kubectl" label namespace "$ns" --overwrite pod-security.kubernetes.io/enforce=restricted \
	pod-security.kubernetes.io/warn=restricted >/dev/null

echo "chart-lint: helm template | kubectl apply --server-side --dry-run=server"
for set in "${value_sets[@]}"; do
	mapfile -t args < <(values_args "$set")
	"$helm" template "$release" "$chart" --namespace "$ns" --include-crds "${args[@]}" >"$work/rendered.yaml"
	"$kubectl" apply --server-side --force-conflicts --dry-run=server --field-manager=chart-lint -f "$work/rendered.yaml" >"$work/apply.out" 2>&1 ||
		{ cat "$work/apply.out" >&2; fail "the API server refused the chart rendered with ${set:-the default values}"; }
	if grep -q 'violate PodSecurity' "$work/apply.out"; then
		cat "$work/apply.out" >&2
		fail "the chart rendered with ${set:-the default values} breaks the restricted Pod Security Standard"
	fi
	sed 's/^/  /' "$work/apply.out"
done

echo "chart-lint: helm install and uninstall for real (release lint-install)"
# A namespace of its own per run: a deleted one lingers (Terminating) until a namespace controller runs.
install_ns="chart-lint-install-$$"
"$helm" install lint-install "$chart" --namespace "$install_ns" --create-namespace --set replicaCount=2 \
	--timeout 120s >"$work/install.out" 2>&1 || { cat "$work/install.out" >&2; fail "helm install failed"; }
"$kubectl" -n "$install_ns" get deployment/lint-install-scriptorium-operator poddisruptionbudget/lint-install-scriptorium-operator \
	>/dev/null || fail "helm install did not create the Deployment and PodDisruptionBudget"
"$helm" uninstall lint-install --namespace "$install_ns" --wait --timeout 120s >/dev/null || fail "helm uninstall failed"
if "$kubectl" get clusterrole lint-install-scriptorium-operator >/dev/null 2>&1; then fail "helm uninstall left the ClusterRole behind"; fi
"$kubectl" delete namespace "$install_ns" --wait=false >/dev/null

echo "chart-lint: RBAC of the operator's ServiceAccount (kubectl auth can-i)"
# kubectl resolves "plural.group" through discovery, so the CRDs must really exist for can-i to ask
# about the right API group.
if compgen -G "$chart/crds/*.yaml" >/dev/null; then
	"$kubectl" apply --server-side --field-manager=chart-lint -f "$chart/crds/" >/dev/null
	"$kubectl" wait --for=condition=Established --timeout=60s -f "$chart/crds/" >/dev/null
fi
"$helm" template "$release" "$chart" --namespace "$ns" --show-only templates/serviceaccount.yaml \
	--show-only templates/clusterrole.yaml --show-only templates/clusterrolebinding.yaml \
	--show-only templates/leader-election-rbac.yaml | "$kubectl" apply --server-side --field-manager=chart-lint -f - >/dev/null
sa="system:serviceaccount:$ns:$release-scriptorium-operator"
can() { "$kubectl" auth can-i --as="$sa" "$@" >/dev/null 2>&1; }
# (verb resource [namespace]) the reconcilers need, as docs/operations.md's RBAC table lists them.
need=(
	"watch translationservices.scriptorium.dev" "patch ledgerclusters.scriptorium.dev"
	"update translationservices.scriptorium.dev --subresource=status"
	"update ledgerclusters.scriptorium.dev --subresource=finalizers"
	"create deployments.apps" "delete jobs.batch" "patch cronjobs.batch" "list secrets" "create services"
	"patch ingresses.networking.k8s.io" "create horizontalpodautoscalers.autoscaling"
	"create poddisruptionbudgets.policy" "create events.events.k8s.io" "create events"
	"patch statefulsets.apps" "delete statefulsets.apps" "create configmaps" "patch configmaps"
	"delete persistentvolumeclaims" "watch pods" "patch ledgerclusters.scriptorium.dev"
)
for check in "${need[@]}"; do
	# shellcheck disable=SC2086 # word splitting is the point: "verb resource"
	can $check -n team-a || fail "the operator cannot '$check' in a tenant namespace"
done
can create leases.coordination.k8s.io -n "$ns" || fail "the operator cannot create its Lease"
can update leases.coordination.k8s.io/scriptorium-operator -n "$ns" || fail "the operator cannot renew its Lease"
# What it must never be able to do.
deny=(
	"create translationservices.scriptorium.dev" "delete ledgerclusters.scriptorium.dev" "update deployments.apps"
	"create pods" "create pods --subresource=exec" "create clusterrolebindings.rbac.authorization.k8s.io"
	"escalate clusterroles.rbac.authorization.k8s.io" "impersonate users" "create customresourcedefinitions.apiextensions.k8s.io"
	"delete namespaces" "create serviceaccounts --subresource=token"
	"update secrets" "delete secrets" "update configmaps" "delete configmaps" "patch events"
	"create persistentvolumeclaims" "delete pods" "update statefulsets.apps"
)
for check in "${deny[@]}"; do
	# shellcheck disable=SC2086
	if can $check -n team-a; then fail "the operator may '$check' (broader than its reconcilers need)"; fi
done
if can update leases.coordination.k8s.io/someone-elses-lease -n "$ns"; then fail "the operator may update any Lease"; fi
if can create leases.coordination.k8s.io -n team-a; then fail "the operator may create Leases outside its namespace"; fi

echo "chart-lint: deploy/samples and deploy/postgres.yaml against the CRDs (server-side dry-run)"
"$kubectl" apply --server-side --force-conflicts --dry-run=server --field-manager=chart-lint -n "$ns" \
	-f "$root/deploy/postgres.yaml" -f "$root/deploy/samples/" >"$work/apply.out" 2>&1 ||
	{ cat "$work/apply.out" >&2; fail "the API server refused a sample (deploy/samples/ and the CRDs disagree)"; }

echo "chart-lint: kustomize base (deploy/kustomize)"
HELM="$helm" bash "$root/deploy/kustomize/render.sh" --check
"$kubectl" kustomize "$root/deploy/kustomize/base" >"$work/kustomized.yaml"
"$kubectl" apply --server-side --force-conflicts --dry-run=server --field-manager=chart-lint-kustomize \
	-f "$work/kustomized.yaml" >"$work/apply.out" 2>&1 || { cat "$work/apply.out" >&2; fail "the API server refused the kustomize base"; }

echo "chart-lint: ok"
