// Release seam: the code of this package that differs between release lines. A line where it
// differs carries its own copy of this file at releases/<line>/src/cmd/pv-controller-manager/app/
// (v1.38); nothing else in the package differs (hack/verify/verify-release-seams.sh).

package app

import (
	"context"

	"k8s.io/apiserver/pkg/server"
	"k8s.io/klog/v2"
	persistentvolumeconfig "k8s.io/kubernetes/pkg/controller/volume/persistentvolume/config"
)

// setupSignalContext is apiserver's: the first SIGTERM/SIGINT cancels the context, a second one
// exits at once. v1.38: k8s.io/apiserver v0.38 moved it to pkg/server/signals.
func setupSignalContext() context.Context {
	return server.SetupSignalContext()
}

// setMetricsVolumePlugins gives the binder the plugins its volume metrics name (their plugin_name
// label). Before v1.38 the binder takes none apart from VolumePlugins. v1.38: every persistent
// volume plugin, as KCM v1.38 gives its own binder (kubernetes/kubernetes#139356).
func (p *binderParameters) setMetricsVolumePlugins(klog.Logger, persistentvolumeconfig.VolumeConfiguration) error {
	return nil
}
