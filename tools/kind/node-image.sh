#!/usr/bin/env bash
# kind's node image for Kubernetes $KUBE_VERSION, built here without a registry. It follows what `kind build
# node-image` does (sigs.k8s.io/kind pkg/build/nodeimage/buildcontext.go), step by step, on the base image of
# tools/kind/base-image.sh:
#   1. a build container from the base image (`docker run -d --entrypoint=sleep … infinity`);
#   2. kubeadm, kubelet and kubectl copied to /usr/bin (tools/kube/build.sh --kind builds them from source);
#   3. /kind/version;
#   4. /kind/manifests/default-cni.yaml and default-storage.yaml;
#   5. containerd started in the build container and every image imported into its k8s.io namespace (the suite's
#      PostgreSQL and Traefik too, so that a cluster loads only the project's images)
#      (`ctr images import --label=io.cri-containerd.pinned=pinned --all-platforms --no-unpack --digests`);
#   6. `docker commit` with kind's ENTRYPOINT and the proxy variables cleared.
# Why it does not run `kind build node-image` itself: that command pulls from registries every image it did not
# build (etcd, CoreDNS, pause, kindnetd, local-path-provisioner), and none can be reached here; and kindnetd's
# source is not on the Go module proxy, so it cannot be built either. Instead:
#   - the images kubeadm runs are built here from the project's own Go builds and named under
#     localhost/scriptorium (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy at $KUBE_VERSION;
#     etcd at $ETCD_VERSION; CoreDNS and pause from tools/cluster/images.sh); tools/kind/kind-config.yaml sets
#     kubeadm's imageRepository and etcd tag to them;
#   - the default storage is kind's own manifest (from the kind module) with rancher's local-path-provisioner built
#     from the Go module proxy, and a Debian minbase helper image;
#   - the default CNI is a static ptp + host-local + portmap conflist in /etc/cni/net.d (the CNI plugins kind
#     ships) over kind's pod subnet, and default-cni.yaml only a ConfigMap saying so: one node per cluster
#     (kindnetd, which routes between nodes, is what cannot be built). A multi-node cluster needs its own CNI.
# Prints the image tag. Needs the engine (tools/kind/engine.sh start). Root only.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root_dir=$(cd "$here/../.." && pwd)
# shellcheck source=tools/kind/lib.sh
source "$here/lib.sh"
image_lock node-image

LOCAL_PATH_VERSION=v0.0.30
POD_SUBNET=10.244.0.0/16

base=$(bash "$here/base-image.sh")
bins=$(bash "$root_dir/tools/kube/build.sh" --kind)
bash "$root_dir/tools/cluster/images.sh" --base >/dev/null
cluster_images="$CACHE/cluster/images"
started=$SECONDS

stamp_input=$(
	cat "$0" "$here/lib.sh"
	echo "$base $LOCAL_PATH_VERSION"
	for b in kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy etcd; do
		cat "$bins/.$b.version"
	done
	cat "$cluster_images/coredns.stamp" "$cluster_images/pause.stamp" "$cluster_images/postgres.stamp" \
		"$cluster_images/traefik.stamp"
)
tag="$NODE_REPO:$KUBE_VERSION-$(sha256sum <<<"$stamp_input" | cut -c1-12)"
image_cached "$tag" image/kind-node

ctx="$WORK/node-ctx"
rm -rf "$ctx" && mkdir -p "$ctx/archives"

klog "node image: a shared Debian minbase layer for the component images"
minbase="$CACHE/cluster/rootfs/bookworm-minbase"
tar --numeric-owner -C "$minbase" -c . | docker import - "$IMAGE_REPO/kind-minbase:1" >/dev/null

# component NAME BINARY VERSION FROM: an image with BINARY as /usr/local/bin/NAME (kubeadm's manifests run it by
# name), saved as a docker archive for the import.
component() {
	local name=$1 binary=$2 version=$3 from=$4 dir="$ctx/$1"
	mkdir -p "$dir" && cp "$binary" "$dir/$name"
	printf 'FROM %s\nCOPY %s /usr/local/bin/%s\nENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n' \
		"$from" "$name" "$name" >"$dir/Dockerfile"
	docker build -q -t "$IMAGE_REPO/$name:$version" "$dir" >/dev/null 2>&1
	docker save -o "$ctx/archives/$name.tar" "$IMAGE_REPO/$name:$version"
	klog "node image: $IMAGE_REPO/$name:$version"
}
for c in kube-apiserver kube-controller-manager kube-scheduler; do
	component "$c" "$bins/$c" "$KUBE_VERSION" "$IMAGE_REPO/kind-minbase:1"
done
# kube-proxy runs iptables-restore and conntrack: the node base has them.
component kube-proxy "$bins/kube-proxy" "$KUBE_VERSION" "$base"
component etcd "$bins/etcd" "$ETCD_VERSION" "$IMAGE_REPO/kind-minbase:1"

klog "node image: local-path-provisioner $LOCAL_PATH_VERSION (Go module proxy)"
lpp="$WORK/local-path-provisioner-$LOCAL_PATH_VERSION"
if [[ ! -x $lpp ]]; then
	GOBIN="$WORK/gobin" go install -trimpath -ldflags "-s -w" "github.com/rancher/local-path-provisioner@$LOCAL_PATH_VERSION" >&2
	mv "$WORK/gobin/local-path-provisioner" "$lpp"
fi
component local-path-provisioner "$lpp" "$LOCAL_PATH_VERSION" "$IMAGE_REPO/kind-minbase:1"
# The helper runs sh, mkdir and rm in a pod on the node: the minbase has them.
docker tag "$IMAGE_REPO/kind-minbase:1" "$IMAGE_REPO/local-path-helper:1"
docker save -o "$ctx/archives/local-path-helper.tar" "$IMAGE_REPO/local-path-helper:1"

klog "node image: kind's storage manifest, with these images"
sed -n '/^const defaultStorageManifest = `/,/^`/p' "$KIND_SRC/pkg/build/nodeimage/const_storage.go" | sed '1d;$d' |
	sed -e "s#\` + storageProvisionerImage + \`#$IMAGE_REPO/local-path-provisioner:$LOCAL_PATH_VERSION#" \
		-e "s#\` + storageHelperImage + \`#$IMAGE_REPO/local-path-helper:1#" >"$ctx/default-storage.yaml"
grep -q "image: $IMAGE_REPO/local-path-provisioner" "$ctx/default-storage.yaml" || die "kind's storage manifest changed shape"
cat >"$ctx/default-cni.yaml" <<YAML
# kind applies this file once the control plane is up. The node's CNI is the static conflist below, already in
# /etc/cni/net.d (tools/kind/node-image.sh): this ConfigMap only says so, for whoever looks in kube-system.
apiVersion: v1
kind: ConfigMap
metadata:
  name: scriptorium-kind-cni
  namespace: kube-system
data:
  README: >-
    CNI: ptp + host-local ($POD_SUBNET) + portmap, from /etc/cni/net.d/10-scriptorium-ptp.conflist of the node
    image (one node per cluster; kindnetd is not in this image).
YAML
cat >"$ctx/10-scriptorium-ptp.conflist" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "scriptorium-kind",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": true,
      "mtu": 1500,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$POD_SUBNET" }]], "routes": [{ "dst": "0.0.0.0/0" }] }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
JSON

klog "node image: build container from $base"
id="kind-build-$(date +%s)-$RANDOM"
docker run -d --entrypoint=sleep --name="$id" --security-opt seccomp=unconfined "$base" infinity >/dev/null
trap 'docker rm -f -v "$id" >/dev/null 2>&1 || true' EXIT
for b in kubeadm kubelet kubectl; do
	docker cp "$bins/$b" "$id:/usr/bin/$b"
	docker exec "$id" chmod +x "/usr/bin/$b"
	docker exec "$id" chown root:root "/usr/bin/$b"
done
docker exec "$id" sh -c "echo '$KUBE_VERSION' > /kind/version"
docker exec "$id" mkdir -p /kind/manifests /etc/cni/net.d
docker cp "$ctx/default-cni.yaml" "$id:/kind/manifests/default-cni.yaml"
docker cp "$ctx/default-storage.yaml" "$id:/kind/manifests/default-storage.yaml"
docker cp "$ctx/10-scriptorium-ptp.conflist" "$id:/etc/cni/net.d/10-scriptorium-ptp.conflist"

klog "node image: importing the images into the node's containerd"
docker exec "$id" bash -c 'nohup containerd > /dev/null 2>&1 &'
docker exec "$id" bash -c 'for i in {0..30}; do [ -S /run/containerd/containerd.sock ] && break; sleep 1; done; ctr version >/dev/null'
# With them the third-party images the end-to-end suite runs (PostgreSQL, the ingress controller), which change with
# their versions only: a new cluster then loads just the three project images (deploy/e2e-kind.sh).
for archive in "$ctx"/archives/*.tar "$cluster_images"/{coredns,pause,postgres,traefik}.oci.tar; do
	docker exec -i "$id" ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
		--all-platforms --no-unpack --digests - <"$archive" >&2
done
docker exec "$id" ctr --namespace=k8s.io images list -q >&2
docker exec "$id" pkill containerd || true
sleep 2

docker commit \
	--change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' \
	--change 'ENV HTTP_PROXY="" HTTPS_PROXY="" NO_PROXY=""' \
	"$id" "$tag" >/dev/null
klog "node image: $tag"
rm -rf "$ctx"
image_built "$tag" image/kind-node "$started"
