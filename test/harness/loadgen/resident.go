package loadgen

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// ScenarioResident: N PV/PVC pairs written as a binder leaves them, Bound on both sides, without a
// binder (the loader writes the claimRef, the annotations and both statuses itself), and N/10 free
// Available PVs of a class no claim asks for: the settled population of a large cluster, for
// measuring what a binder costs while nothing happens (make bench-scale). Latency here is the
// loader's own write time; a binder started afterwards should write nothing.
const ScenarioResident = "resident"

// ResidentFreeClass is the storage class of the resident free PVs: no claim of the loader asks for it.
const ResidentFreeClass = "resident-free"

func init() { Register(resident{}) }

type resident struct{ base }

func (resident) Name() string { return ScenarioResident }
func (resident) Help() string {
	return "N pairs written Bound on both sides without a binder, and N/10 free Available PVs: a settled cluster (make bench-scale)"
}

// Bench: not in make bench's set; make bench-scale (hack/bench/bench-scale.sh) runs it.
func (resident) Bench() Bench { return Bench{Counts: "COUNT"} }

func (resident) Shape(c *Config, i int, claim *v1.PersistentVolumeClaim, _ *v1.PersistentVolume) {
	claim.Spec.VolumeName = c.name(i)
	metav1.SetMetaDataAnnotation(&claim.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
}

// WritesAfterStart: per pair the two creates and the two status writes; per free PV its create and
// its status.
func (resident) WritesAfterStart(n int) int { return 4*n + 2*residentFree(n) }

func (resident) CheckBind(c *Config, claim *v1.PersistentVolumeClaim) string {
	return ownVolume(c, claim)
}

func residentFree(n int) int { return n / 10 }

func (resident) Create(ctx context.Context, env *Env) (time.Time, error) {
	start := time.Now()
	cfg, client := env.Config, env.Client
	err := env.ForEach(ctx, func(i int) error {
		env.Started(cfg.name(i))
		claim, err := client.CoreV1().PersistentVolumeClaims(cfg.Namespace).Create(ctx, cfg.Claim(i), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		volume := cfg.Volume(i)
		volume.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
			Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}
		if volume, err = client.CoreV1().PersistentVolumes().Create(ctx, volume, metav1.CreateOptions{}); err != nil {
			return err
		}
		volume.Status.Phase = v1.VolumeBound
		if _, err := client.CoreV1().PersistentVolumes().UpdateStatus(ctx, volume, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("volume %s status: %w", volume.Name, err)
		}
		claim.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound,
			AccessModes: volume.Spec.AccessModes, Capacity: volume.Spec.Capacity}
		if _, err := client.CoreV1().PersistentVolumeClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("claim %s status: %w", claim.Name, err)
		}
		if i > residentFree(cfg.Count) {
			return nil
		}
		free := cfg.Volume(i)
		free.Name = fmt.Sprintf("%s-free-%05d", cfg.Prefix, i)
		free.Spec.StorageClassName = ResidentFreeClass
		if free, err = client.CoreV1().PersistentVolumes().Create(ctx, free, metav1.CreateOptions{}); err != nil {
			return err
		}
		free.Status.Phase = v1.VolumeAvailable
		_, err = client.CoreV1().PersistentVolumes().UpdateStatus(ctx, free, metav1.UpdateOptions{})
		return err
	})
	return start, err
}
