package app

import (
	"fmt"

	"github.com/fastpv/pv-controller-manager/pkg/volumeplugins"
	"k8s.io/klog/v2"
	persistentvolumeconfig "k8s.io/kubernetes/pkg/controller/volume/persistentvolume/config"
)

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
