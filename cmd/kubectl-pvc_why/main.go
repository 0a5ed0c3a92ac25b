// Command kubectl-pvc_why is the kubectl plugin `kubectl pvc-why`: it explains, with the
// binder's own matching code, why a PersistentVolumeClaim is not Bound or not resized.
package main

import (
	"context"
	"os"

	"github.com/fastpv/pv-controller-manager/cmd/kubectl-pvc_why/app"
)

func main() {
	os.Exit(app.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
