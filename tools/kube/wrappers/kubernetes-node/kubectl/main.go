// kubectl at the cluster's own version (the machine's kubectl may be more than one minor behind),
// built from the k8s.io/kubernetes module through a wrapper module (see tools/kube/gen-kube-gomod.sh).
// Same body as upstream cmd/kubectl/kubectl.go.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	// Import to initialize client auth plugins.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	// Parse the verbosity first, so klog works while the command is built (upstream does the same).
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) // nolint:errcheck
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		// Pretty-print the error and exit with an error.
		util.CheckErr(err)
	}
}
