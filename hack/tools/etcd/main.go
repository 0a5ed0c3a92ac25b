// Command etcd is upstream etcd's server, built from its Go module at the version pinned in go.mod,
// because nothing but Go modules can be fetched here.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
