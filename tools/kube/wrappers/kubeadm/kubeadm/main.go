// kubeadm, built from the k8s.io/kubernetes module through a wrapper module
// (see tools/kube/gen-kube-gomod.sh). Same body as upstream cmd/kubeadm/kubeadm.go.
// Only tools/kind (the node image of `make e2e-kind`) needs it: build.sh --kind.
package main

import (
	"k8s.io/kubernetes/cmd/kubeadm/app"
	utilerrors "k8s.io/kubernetes/cmd/kubeadm/app/util/errors"
)

func main() {
	utilerrors.HandleError(app.Run())
}
