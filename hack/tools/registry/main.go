// Command registry is the CNCF Distribution registry (github.com/distribution/distribution/v3, the
// version go.mod pins) with the filesystem storage driver only: upstream's cmd/registry also links
// the cloud drivers (S3, GCS, Azure) and the pull-through proxy, which a local test registry never
// uses. make e2e-kind and make e2e-upstream run it as the cluster's image registry
// (hack/e2e/registry.sh); the command line is upstream's: registry serve CONFIG.
package main

import (
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() {
	// RootCmd exits non-zero itself when serve fails.
	_ = registry.RootCmd.Execute()
}
