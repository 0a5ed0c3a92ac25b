package version

import (
	"fmt"
	"runtime"
)

// These are set with -ldflags "-X github.com/fastpv/pv-controller-manager/pkg/version.Version=..." by the Makefile.
var (
	// Version is the pv-controller-manager version (git describe).
	Version = "v0.0.0-dev"
	// Upstream is the k8s.io/kubernetes tag the vendored controller comes from (releases/<line>/UPSTREAM).
	Upstream = "unknown"
	// GitCommit is the commit the binary was built from.
	GitCommit = "unknown"
)

// String is the one-line version printed by --version and logged at start.
func String() string {
	return fmt.Sprintf("pv-controller-manager %s (upstream k8s.io/kubernetes %s, commit %s, %s)", Version, Upstream, GitCommit, runtime.Version())
}
