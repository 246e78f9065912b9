#!/usr/bin/env bash
# kind's node base image, built here without a registry, following kind's own images/base/Dockerfile (read from
# the sigs.k8s.io/kind module of tools/kube/versions.env, in the Go module cache) step by step:
#   - a Debian bookworm rootfs (the local cluster's debootstrap minbase, tools/cluster/images.sh --base);
#   - kind's static files: /usr/local/bin/{entrypoint,clean-install}, /kind/, /etc/containerd/config.toml,
#     /etc/crictl.yaml, /etc/default/kubelet, /etc/sysctl.d/*, the systemd units (kubelet, containerd,
#     undo-mount-hacks, kubelet.slice) and kubelet.service.d;
#   - the Dockerfile's packages through its own clean-install (systemd, conntrack, iptables, nftables, iproute2,
#     ethtool, util-linux, mount, kmod, libseccomp2, pigz, fuse-overlayfs, nfs-common, open-iscsi, bash,
#     ca-certificates, curl, jq, procps), the same unit clean-up, ReadKMsg=no, /sbin/init -> systemd;
#   - containerd and runc from Debian (kind builds them from source; Debian's 1.6 reads the same version 2
#     config), linked where kind's units expect them; /etc/containerd/cri-base.json from `ctr oci spec` with kind's
#     createContainer hook and without rlimits, as the Dockerfile makes it;
#   - the CNI plugins kind ships (host-local, loopback, ptp, portmap) from Debian's containernetworking-plugins;
#   - crictl built from the Go module proxy (sigs.k8s.io/cri-tools at the Kubernetes minor);
#   - kubelet, containerd and undo-mount-hacks enabled, systemd-binfmt masked, /etc/kubernetes/manifests;
#   - ENV container=docker, STOPSIGNAL SIGRTMIN+3, ENTRYPOINT [/usr/local/bin/entrypoint, /sbin/init].
# Differences, each for this sandbox: the sandbox image is the local cluster's pause (no registry), and
# containerd's restrict_oom_score_adj is on (root lacks CAP_SYS_RESOURCE, as kind does for rootless nodes).
# Prints the image tag. Needs the engine (tools/kind/engine.sh start). Root only.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root_dir=$(cd "$here/../.." && pwd)
# shellcheck source=tools/kind/lib.sh
source "$here/lib.sh"
image_lock base-image
started=$SECONDS

files="$KIND_SRC/images/base/files"
[[ -d $files ]] || die "kind's images/base not found in $KIND_SRC"
stamp_input=$(
	cat "$0" "$root_dir/tools/kube/versions.env"
	echo "$CRI_TOOLS_VERSION"
	find "$files" -type f -print0 | sort -z | xargs -0 sha256sum
)
tag="$BASE_REPO:$KIND_VERSION-$(sha256sum <<<"$stamp_input" | cut -c1-12)"
image_cached "$tag" image/kind-base

minbase="$CACHE/cluster/rootfs/bookworm-minbase"
[[ -f $minbase.stamp ]] || bash "$root_dir/tools/cluster/images.sh" --base >&2
rootfs="$WORK/base-rootfs"
rm -rf "$rootfs" && cp -a "$minbase" "$rootfs"
trap 'umount_chroot "$rootfs"' EXIT

klog "kind base: kind's static files"
install -m 0755 "$files"/usr/local/bin/* "$rootfs/usr/local/bin/"
mkdir -p "$rootfs/kind/bin" "$rootfs/LICENSES" "$rootfs/etc/containerd" "$rootfs/etc/default" \
	"$rootfs/etc/sysctl.d" "$rootfs/etc/systemd/system/kubelet.service.d"
cp -r "$files/kind/." "$rootfs/kind/" && chmod -R u=rwX,go=rX "$rootfs/kind" && chmod 0755 "$rootfs"/kind/bin/*
install -m 0644 "$files"/LICENSES/* "$rootfs/LICENSES/"
find "$files/etc" -maxdepth 1 -type f -exec install -m 0644 {} "$rootfs/etc/" \;
install -m 0644 "$files"/etc/containerd/* "$rootfs/etc/containerd/"
install -m 0644 "$files"/etc/default/* "$rootfs/etc/default/"
install -m 0644 "$files"/etc/sysctl.d/* "$rootfs/etc/sysctl.d/"
find "$files/etc/systemd/system" -maxdepth 1 -type f -exec install -m 0644 {} "$rootfs/etc/systemd/system/" \;
install -m 0644 "$files"/etc/systemd/system/kubelet.service.d/* "$rootfs/etc/systemd/system/kubelet.service.d/"

klog "kind base: packages (the Dockerfile's list, plus containerd, runc and the CNI plugins from Debian)"
mount_chroot "$rootfs"
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
# No service starts inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d" && chmod 755 "$rootfs/usr/sbin/policy-rc.d"
# kind's files are in place already: a package's own config file never replaces one (no dpkg prompt).
printf 'Dpkg::Options { "--force-confdef"; "--force-confold"; };\n' >"$rootfs/etc/apt/apt.conf.d/90kind-keep-config"
chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive clean-install \
	systemd \
	conntrack iptables nftables iproute2 ethtool util-linux mount kmod \
	libseccomp2 pigz fuse-overlayfs \
	nfs-common open-iscsi \
	bash ca-certificates curl jq procps \
	containerd runc containernetworking-plugins >&2
rm -f "$rootfs/usr/sbin/policy-rc.d" "$rootfs/etc/apt/apt.conf.d/90kind-keep-config"
chroot "$rootfs" sh -c '
	find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete
	rm -f /lib/systemd/system/multi-user.target.wants/*
	rm -f /etc/systemd/system/*.wants/*
	rm -f /lib/systemd/system/local-fs.target.wants/*
	rm -f /lib/systemd/system/sockets.target.wants/*udev*
	rm -f /lib/systemd/system/sockets.target.wants/*initctl*
	rm -f /lib/systemd/system/basic.target.wants/*
	echo "ReadKMsg=no" >> /etc/systemd/journald.conf
	ln -sf "$(which systemd)" /sbin/init'
# kind's units and config name /usr/local/bin for containerd; Debian installs it in /usr/bin.
for b in containerd containerd-shim-runc-v2 ctr; do ln -sf "/usr/bin/$b" "$rootfs/usr/local/bin/$b"; done
# kind's config.toml again (Debian's package may have put its own), then this sandbox's two settings.
install -m 0644 "$files/etc/containerd/config.toml" "$rootfs/etc/containerd/config.toml"
sed -i -e "s#sandbox_image = .*#sandbox_image = \"$PAUSE_IMAGE\"#" \
	-e 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' "$rootfs/etc/containerd/config.toml"
chroot "$rootfs" sh -c "ctr oci spec \
	| jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {\"path\": \"/kind/bin/mount-product-files.sh\"}' \
	| jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json"
mkdir -p "$rootfs/opt/cni/bin"
for p in host-local loopback ptp portmap; do install -m 0755 "$rootfs/usr/lib/cni/$p" "$rootfs/opt/cni/bin/$p"; done

klog "kind base: crictl $CRI_TOOLS_VERSION (Go module proxy)"
crictl_bin="$WORK/crictl-$CRI_TOOLS_VERSION"
if [[ ! -x $crictl_bin ]]; then
	# `go install …@version` asks the proxy for the module's version list, which it refuses for this module, and
	# its checksum database has no entry for it: download that one version, then build in it (its go.sum pins
	# every dependency, each checked against the checksum database as usual).
	src=$(GONOSUMDB=sigs.k8s.io/cri-tools go mod download -json "sigs.k8s.io/cri-tools@$CRI_TOOLS_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	(cd "$src" && go build -trimpath -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRI_TOOLS_VERSION" \
		-o "$crictl_bin" ./cmd/crictl) >&2
fi
install -m 0755 "$crictl_bin" "$rootfs/usr/local/bin/crictl"

klog "kind base: services"
chroot "$rootfs" sh -c 'systemctl enable kubelet.service containerd.service undo-mount-hacks.service && systemctl mask systemd-binfmt.service' >&2
mkdir -p "$rootfs/etc/kubernetes/manifests"
: >"$rootfs/etc/resolv.conf"
umount_chroot "$rootfs"
trap - EXIT

klog "kind base: importing $tag"
tar --numeric-owner -C "$rootfs" -c . | docker import \
	--change 'ENV container=docker' \
	--change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' \
	- "$tag-rootfs" >&2
# `docker import` takes no STOPSIGNAL: one more (empty) layer sets it.
printf 'FROM %s\nSTOPSIGNAL SIGRTMIN+3\n' "$tag-rootfs" | docker build -q -t "$tag" - >&2
docker rmi "$tag-rootfs" >/dev/null
rm -rf "$rootfs"
image_built "$tag" image/kind-base "$started"
