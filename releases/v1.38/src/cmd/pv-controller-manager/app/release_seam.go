// Release seam of v1.38: this line's copy of cmd/pv-controller-manager/app/release_seam.go.

package app

import (
	"context"
	"fmt"

	"github.com/fastpv/pv-controller-manager/pkg/volumeplugins"
	"k8s.io/apiserver/pkg/server/signals"
	"k8s.io/klog/v2"
	persistentvolumeconfig "k8s.io/kubernetes/pkg/controller/volume/persistentvolume/config"
)

// setupSignalContext is apiserver's: the first SIGTERM/SIGINT cancels the context, a second one
// exits at once. k8s.io/apiserver v0.38 moved it to pkg/server/signals.
func setupSignalContext() context.Context {
	return signals.SetupSignalContext()
}

// setMetricsVolumePlugins gives the binder the plugins its volume metrics name (their plugin_name
// label): every persistent volume plugin of KCM's controllers, as KCM v1.38 gives its own binder
// (MetricsVolumePlugins, kubernetes/kubernetes#139356).
func (p *binderParameters) setMetricsVolumePlugins(logger klog.Logger, config persistentvolumeconfig.VolumeConfiguration) error {
	plugins, err := volumeplugins.ProbePersistentVolumePlugins(logger, config)
	if err != nil {
		return fmt.Errorf("failed to probe metrics volume plugins when starting persistentvolume controller: %w", err)
	}
	p.MetricsVolumePlugins = plugins
	return nil
}
