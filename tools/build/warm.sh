#!/usr/bin/env bash
# `make ci-warm`: builds (or checks) every cache a CI run uses, and runs no test, so that a new machine can be warmed
# early and the CI run after it finds everything built. Each artifact is rebuilt only when its key (version and
# recipe, tools/build/lib.sh) changed, so a second run takes seconds. What it warms, in the order CI needs it:
#   1. Debian packages (tools/build/packages.sh; root);
#   2. Node 24 and the npm dependencies (make deps), and the snapshot of a fresh clone's npm ci that a CI clone
#      unpacks (tools/build/npm-deps.sh, run in a throwaway clone of HEAD);
#   3. every Go binary: the control plane, the local cluster's node pieces, Traefik, CoreDNS, kubeadm, helm, kind
#      (tools/kube/build.sh --kind; the Go module and build caches with them), and litewitness and note-verify
#      (tools/tlog/build.sh);
#   4. FIWARE Scorpio, the real NGSI-LD broker of the ledger watch's tests (tools/scorpio/build.sh; Maven's cache
#      with it);
#   5. schemathesis, the OpenAPI-driven fuzzer of the integration tests (tools/schemathesis/build.sh; a virtual
#      environment from PyPI);
#   6. the local cluster's images, the project images of this checkout included (tools/cluster/images.sh; root), and
#      its image store, into which a cluster brought up once imports them (tools/cluster/up.sh, then down);
#   7. kind's base and node images in the Docker engine's storage (tools/kind/node-image.sh; root; the engine is
#      started for it and stopped after, unless it was already running).
# Without root only 2, 3, 4 and 5 run. The caches live outside the repository ($SCRIPTORIUM_CACHE, /var/lib/containers,
# /var/lib/scriptorium-docker).
set -euo pipefail
root_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root_dir"
# shellcheck source=tools/build/lib.sh
source tools/build/lib.sh
started=$SECONDS
root=$([[ $(id -u) == 0 ]] && echo yes || echo no)

[[ $root == no ]] || step_run packages bash tools/build/packages.sh
step_run deps make --no-print-directory deps
# A fresh clone of HEAD, as CI makes: its `make deps` finds (or makes) the npm snapshot CI's clone will unpack.
clone=$(mktemp -d)
git clone -q --no-hardlinks "$root_dir" "$clone/repo"
step_run npm-snapshot bash "$clone/repo/tools/build/npm-deps.sh"
rm -rf "$clone"
step_run go-binaries bash tools/kube/build.sh --kind >/dev/null
step_run tlog-binaries bash tools/tlog/build.sh >/dev/null
step_run scorpio bash tools/scorpio/build.sh >/dev/null
step_run fuzzer bash tools/schemathesis/build.sh >/dev/null
if [[ $root == yes ]]; then
	step_run images bash tools/cluster/images.sh >/dev/null
	# The local cluster's image store (IMAGE_STORE, tools/cluster/lib.sh), which outlives a cluster: brought up once,
	# a cluster imports every archive that changed; taken down again unless it was already up.
	cluster_was_up=no
	bash -c 'source tools/cluster/lib.sh && pid_alive kube-apiserver' 2>/dev/null && cluster_was_up=yes
	DEMO=0 step_run cluster-images bash tools/cluster/up.sh >/dev/null
	[[ $cluster_was_up == yes ]] || bash tools/cluster/down.sh >/dev/null 2>&1 || true
	engine_was_up=no
	bash tools/kind/engine.sh status >/dev/null 2>&1 && engine_was_up=yes
	step_run kind-engine bash tools/kind/engine.sh start
	step_run kind-images bash tools/kind/node-image.sh >/dev/null
	[[ $engine_was_up == yes ]] || bash tools/kind/engine.sh stop >/dev/null 2>&1 || true
else
	echo "ci-warm: not root: the images (local cluster, kind) are left for a root run" >&2
fi
echo "ci-warm: every cache CI uses is built ($((SECONDS - started)) s)" >&2
