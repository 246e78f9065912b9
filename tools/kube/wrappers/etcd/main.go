// etcd, built from go.etcd.io/etcd/server/v3 through a wrapper module (the etcd repository's
// own go.mod files use relative replace directives, so `go install` cannot build it).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
