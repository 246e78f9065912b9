# Shared settings of tools/kind/*.sh (sourced, not run), with tools/kube/versions.env and tools/build/lib.sh.
# shellcheck shell=bash
kind_lib_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tools/kube/versions.env
source "$kind_lib_root/tools/kube/versions.env"
# shellcheck source=tools/build/lib.sh
source "$kind_lib_root/tools/build/lib.sh"
CACHE=${SCRIPTORIUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scriptorium}
WORK="$CACHE/kind"
KUBE_BIN="$CACHE/kube/$KUBE_VERSION/bin"
# The Go environment of tools/kube/build.sh: its module cache holds the kind module (kind is built from it).
export GOPATH="$CACHE/go/path" GOMODCACHE="$CACHE/go/mod" GOCACHE="$CACHE/go/build"
export CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-auto} GOFLAGS="-mod=mod -buildvcs=false"
export GOPROXY=${GOPROXY:-https://proxy.golang.org,direct}
KIND_SRC="$GOMODCACHE/sigs.k8s.io/kind@$KIND_VERSION"
# crictl of the Kubernetes minor (cri-tools releases follow Kubernetes).
CRI_TOOLS_VERSION=v1.${KUBE_VERSION#v1.} && CRI_TOOLS_VERSION=${CRI_TOOLS_VERSION%.*}.0
BASE_REPO=localhost/scriptorium/kind-base
NODE_REPO=localhost/scriptorium/kind-node
# Images the node's containerd holds (kubeadm's imageRepository is set to localhost/scriptorium).
IMAGE_REPO=localhost/scriptorium
PAUSE_IMAGE=$IMAGE_REPO/pause:1
export DOCKER_HOST=${DOCKER_HOST:-unix:///run/scriptorium-docker/docker.sock}
mkdir -p "$WORK"

klog() { echo "kind: $*" >&2; }
die() { klog "$*"; exit 1; }

mount_chroot() {
	mount -t proc proc "$1/proc"
	mount -t sysfs sys "$1/sys"
	mount --bind /dev "$1/dev"
	mount --bind /dev/pts "$1/dev/pts"
}
umount_chroot() {
	local m
	for m in dev/pts dev sys proc; do mountpoint -q "$1/$m" && umount -l "$1/$m"; done
	return 0
}

# image_lock NAME: one build of an image at a time (CI may already be building it in the background): a second run
# waits, then finds the tag.
image_lock() {
	exec 8>"$WORK/.$1.lock"
	flock 8
}
# image_cached TAG ARTIFACT: when the engine has TAG already, its step row and the tag are printed and the script ends.
image_cached() {
	docker image inspect "$1" >/dev/null 2>&1 || return 0
	step_artifact "$2" 0 cached
	echo "$1"
	exit 0
}
# image_built TAG ARTIFACT STARTED: the step row of a built image (timed from STARTED, a $SECONDS), and the tag.
image_built() {
	step_artifact "$2" $((SECONDS - $3)) built
	echo "$1"
}
