package app

import (
	"k8s.io/klog/v2"
	persistentvolumeconfig "k8s.io/kubernetes/pkg/controller/volume/persistentvolume/config"
)

// setMetricsVolumePlugins gives the binder the plugins its volume metrics name (their plugin_name
// label). Before v1.38 the binder takes none apart from VolumePlugins; its own file because v1.38's
// binder does (kubernetes/kubernetes#139356; releases/v1.38/src/ has that line's copy).
func (p *binderParameters) setMetricsVolumePlugins(klog.Logger, persistentvolumeconfig.VolumeConfiguration) error {
	return nil
}
