package volumeplugins

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	persistentvolumeconfig "k8s.io/kubernetes/pkg/controller/volume/persistentvolume/config"
	"k8s.io/kubernetes/pkg/volume"
)

func pluginNames(t *testing.T, cfg persistentvolumeconfig.VolumeConfiguration) []string {
	t.Helper()
	return probedNames(t, ProbeProvisionableRecyclableVolumePlugins, cfg)
}

func probedNames(t *testing.T, probe func(klog.Logger, persistentvolumeconfig.VolumeConfiguration) ([]volume.VolumePlugin, error), cfg persistentvolumeconfig.VolumeConfiguration) []string {
	t.Helper()
	logger, _ := ktesting.NewTestContext(t)
	plugins, err := probe(logger, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range plugins {
		names = append(names, p.GetPluginName())
	}
	slices.Sort(names)
	return names
}

func TestProbeMatchesKCMBinderPlugins(t *testing.T) {
	// KCM's binder gets the plugins that provision, delete or recycle: hostPath and NFS.
	// fc, iscsi and csi are probed but filtered out.
	got := pluginNames(t, persistentvolumeconfig.VolumeConfiguration{})
	want := []string{"kubernetes.io/host-path", "kubernetes.io/nfs"}
	if !slices.Equal(got, want) {
		t.Fatalf("plugins = %v, want %v", got, want)
	}
}

func TestBadRecyclerTemplateNamesTheFlag(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "recycler.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for flag, cfg := range map[string]persistentvolumeconfig.VolumeConfiguration{
		"--pv-recycler-pod-template-filepath-nfs":      {PersistentVolumeRecyclerConfiguration: persistentvolumeconfig.PersistentVolumeRecyclerConfiguration{PodTemplateFilePathNFS: filepath.Join(dir, "missing.yaml")}},
		"--pv-recycler-pod-template-filepath-hostpath": {PersistentVolumeRecyclerConfiguration: persistentvolumeconfig.PersistentVolumeRecyclerConfiguration{PodTemplateFilePathHostPath: bad}},
	} {
		logger, _ := ktesting.NewTestContext(t)
		_, err := ProbeProvisionableRecyclableVolumePlugins(logger, cfg)
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: want an error naming the flag, got %v", flag, err)
		}
	}
}

func TestProbePersistentVolumePluginsIsKCMsFullSet(t *testing.T) {
	// What KCM v1.38 gives its binder for the plugin_name label of its volume metrics: every
	// controller plugin, those that cannot provision, delete or recycle included.
	got := probedNames(t, ProbePersistentVolumePlugins, persistentvolumeconfig.VolumeConfiguration{})
	want := []string{"kubernetes.io/csi", "kubernetes.io/fc", "kubernetes.io/host-path", "kubernetes.io/iscsi", "kubernetes.io/nfs"}
	if !slices.Equal(got, want) {
		t.Fatalf("plugins = %v, want %v", got, want)
	}
}
