package volumeplugins

import (
	"fmt"

	"k8s.io/klog/v2"
	persistentvolumeconfig "k8s.io/kubernetes/pkg/controller/volume/persistentvolume/config"
	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/kubernetes/pkg/volume/csi"
	"k8s.io/kubernetes/pkg/volume/fc"
	"k8s.io/kubernetes/pkg/volume/hostpath"
	"k8s.io/kubernetes/pkg/volume/iscsi"
	"k8s.io/kubernetes/pkg/volume/nfs"
	volumeutil "k8s.io/kubernetes/pkg/volume/util"
)

// ProbeProvisionableRecyclableVolumePlugins returns the plugins KCM gives its binder: every
// controller plugin that can provision, delete or recycle.
func ProbeProvisionableRecyclableVolumePlugins(logger klog.Logger, config persistentvolumeconfig.VolumeConfiguration) ([]volume.VolumePlugin, error) {
	all, err := ProbePersistentVolumePlugins(logger, config)
	if err != nil {
		return nil, err
	}
	var plugins []volume.VolumePlugin
	for _, plugin := range all {
		_, provisionable := plugin.(volume.ProvisionableVolumePlugin)
		_, deletable := plugin.(volume.DeletableVolumePlugin)
		_, recyclable := plugin.(volume.RecyclableVolumePlugin)
		if provisionable || deletable || recyclable {
			plugins = append(plugins, plugin)
		}
	}
	return plugins, nil
}

// ProbePersistentVolumePlugins returns every persistent volume plugin of KCM's controllers: from
// v1.38 KCM gives them to its binder as well (MetricsVolumePlugins, kubernetes/kubernetes#139356),
// so that its volume metrics name the plugin of every volume, not only of those it can provision.
func ProbePersistentVolumePlugins(logger klog.Logger, config persistentvolumeconfig.VolumeConfiguration) ([]volume.VolumePlugin, error) {
	recycler := config.PersistentVolumeRecyclerConfiguration

	// HostPath recycling is for testing and development purposes only.
	hostPathConfig := volume.VolumeConfig{
		RecyclerMinimumTimeout:   int(recycler.MinimumTimeoutHostPath),
		RecyclerTimeoutIncrement: int(recycler.IncrementTimeoutHostPath),
		RecyclerPodTemplate:      volume.NewPersistentVolumeRecyclerPodTemplate(),
		ProvisioningEnabled:      config.EnableHostPathProvisioning,
	}
	if err := loadRecycler(recycler.PodTemplateFilePathHostPath, &hostPathConfig); err != nil {
		logger.Error(err, "Could not create hostpath recycler pod from file", "path", recycler.PodTemplateFilePathHostPath)
		return nil, fmt.Errorf("--pv-recycler-pod-template-filepath-hostpath: %w", err)
	}
	nfsConfig := volume.VolumeConfig{
		RecyclerMinimumTimeout:   int(recycler.MinimumTimeoutNFS),
		RecyclerTimeoutIncrement: int(recycler.IncrementTimeoutNFS),
		RecyclerPodTemplate:      volume.NewPersistentVolumeRecyclerPodTemplate(),
	}
	if err := loadRecycler(recycler.PodTemplateFilePathNFS, &nfsConfig); err != nil {
		logger.Error(err, "Could not create NFS recycler pod from file", "path", recycler.PodTemplateFilePathNFS)
		return nil, fmt.Errorf("--pv-recycler-pod-template-filepath-nfs: %w", err)
	}

	var all []volume.VolumePlugin
	all = append(all, hostpath.ProbeVolumePlugins(hostPathConfig)...)
	all = append(all, nfs.ProbeVolumePlugins(nfsConfig)...)
	all = append(all, fc.ProbeVolumePlugins()...)
	all = append(all, iscsi.ProbeVolumePlugins()...)
	all = append(all, csi.ProbeVolumePlugins()...)
	return all, nil
}

// loadRecycler replaces the recycler pod template with the one in path, if path is set.
func loadRecycler(path string, config *volume.VolumeConfig) error {
	if path == "" {
		return nil
	}
	pod, err := volumeutil.LoadPodFromFile(path)
	if err != nil {
		return err
	}
	if err := volume.ValidateRecyclerPodTemplate(pod); err != nil {
		return fmt.Errorf("pod specification (%v): %w", path, err)
	}
	config.RecyclerPodTemplate = pod
	return nil
}
