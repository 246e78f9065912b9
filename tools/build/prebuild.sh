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
# `make test` starts this in a session of its own (setsid): with the kernel's autogroups, nice ranks a process only
# against its own session, so the session's autogroup gets the lowest weight too (.ci/run gives it back the normal one
# when the end-to-end stage begins, which may wait on what this still builds).
echo 19 >/proc/self/autogroup 2>/dev/null || true
# kind's nodes run in Docker's CPU group, which nice does not reach: the least weight for it (tools/kind/engine.sh),
# for every start here and deploy/e2e-kind.sh's below; .ci/run's `engine.sh priority` sets the default back.
export ENGINE_CPU_WEIGHT=2
# kind's base image needs neither the Kubernetes binaries nor the local cluster's images, only their Debian rootfs,
# and waits mostly on Debian's packages: it is built beside them, not after them (on a cold machine it took 6 minutes
# at the end of the end-to-end stage's critical path). The rootfs too (debootstrap, 5 minutes at the idle I/O class
# beside the integration stage): the local images wait for it on their lock.
(low bash tools/cluster/images.sh --rootfs >/dev/null && low bash tools/kind/engine.sh start &&
	low bash tools/kind/base-image.sh >/dev/null) &
kind_base=$!
low bash tools/kube/build.sh --kind >/dev/null
low bash tools/cluster/images.sh >/dev/null
wait "$kind_base"
if low bash tools/kind/engine.sh start; then
	low bash tools/kind/node-image.sh >/dev/null
	# Then kind's cluster itself (cluster, images, ingress controller): `make e2e-kind` finds it ready, and the kind
	# branch of the end-to-end stage is its suite alone. Like the engine it runs in, it runs at the lowest priority.
	# Not once the end-to-end stage has begun (.ci/run marks it): make e2e-kind then prepares its cluster itself, and a
	# preparation after it would only leave a cluster behind.
	if [[ -e .test-results/e2e-started ]]; then
		echo "prebuild: the end-to-end stage has begun; make e2e-kind prepares kind itself" >&2
	else
		low env E2E_PHASE=prepare bash deploy/e2e-kind.sh >/dev/null 2>&1 ||
			echo "prebuild: preparing kind failed; make e2e-kind prepares it" >&2
	fi
fi
