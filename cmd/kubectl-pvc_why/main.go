// Command kubectl-pvc_why is the kubectl plugin `kubectl pvc-why`: it explains, with the
// binder's own matching code, why a PersistentVolumeClaim is not Bound or not resized.
package main

import (
	"context"
	"os"

	"github.com/fastpv/pv-controller-manager/pkg/pvcwhy/plugin"
)

func main() {
	os.Exit(plugin.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
