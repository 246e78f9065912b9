// pause: the sandbox ("pause") container of the local cluster (tools/cluster). It holds a pod's
// namespaces open: it sleeps until SIGINT or SIGTERM, and reaps any orphaned child it inherits as
// PID 1 of a shared PID namespace. Built static (CGO_ENABLED=0) by tools/cluster/images.sh.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
