#!/usr/bin/env bash
# What the end-to-end stages will need, built while the integration tests run (`.ci/run` starts this beside them):
# those tests mostly wait on the processes and servers they start and leave the two cores about half idle. Every
# build here runs at the lowest CPU and I/O priority, so the tests keep the machine first; and every build takes its
# artifact's lock, so a stage that needs one while it is still building waits for it instead of building it again.
# Builds only what a key says is missing (tools/build/lib.sh): on a warm machine, the project images of this checkout.
# Root only (images and the Docker engine). Output: its own log; failures are left to the stage that needs the
# artifact, which then builds it itself.
set -uo pipefail
root_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root_dir"
[[ $(id -u) == 0 ]] || { echo "prebuild: root only" >&2; exit 1; }
low() { nice -n 19 ionice -c 3 "$@"; }
low bash tools/kube/build.sh --kind >/dev/null
low bash tools/cluster/images.sh >/dev/null
if low bash tools/kind/engine.sh start; then
	low bash tools/kind/node-image.sh >/dev/null
	# Then kind's whole suite (cluster, images, ingress controller, the suite, the cluster deleted), at the lowest
	# priority like the engine it runs in: it waits on pods far more than it computes, and takes what the integration
	# stage leaves idle. `.ci/run` gives it the normal priority when the end-to-end stage begins, and prints its log.
	# Whoever claims kind's suite first runs it (mkdir is atomic): here, or `.ci/run` at the end-to-end stage when
	# this got no further before (a cold machine).
	if mkdir .test-results/e2e-kind.claimed 2>/dev/null; then
		echo "$BASHPID" >.test-results/e2e-kind.claimed/pid
		rc=0
		E2E_REPORT=.test-results/e2e-kind.json low bash deploy/e2e-kind.sh >.test-results/e2e-kind.log 2>&1 || rc=$?
		echo "$rc" >.test-results/e2e-kind.claimed/rc
	else
		echo "prebuild: the end-to-end stage has begun and runs kind's suite itself" >&2
	fi
fi
