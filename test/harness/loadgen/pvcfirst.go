package loadgen

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
)

// ScenarioPVCFirst: N pre-bound claims first, their volumes Config.PVDelay later; latency from
// the volume's create call to Bound (a binder that forgets a claim synced before its volume waits
// for the resync).
const ScenarioPVCFirst = "pvc-first"

type pvcFirst struct{ base }

func init() { Register(pvcFirst{}) }

func (pvcFirst) Name() string { return ScenarioPVCFirst }
func (pvcFirst) Help() string {
	return "N claims naming their PVs first, the PVs --pv-delay later (latency from the PV's create call)"
}
func (pvcFirst) Bench() Bench {
	return Bench{Counts: "PVC_FIRST_COUNT", SyncPeriod: "60s", Default: true}
}

func (pvcFirst) Shape(c *Config, i int, claim *v1.PersistentVolumeClaim, _ *v1.PersistentVolume) {
	claim.Spec.VolumeName = c.name(i)
}

func (pvcFirst) Create(ctx context.Context, env *Env) (time.Time, error) {
	cfg := env.Config
	if err := env.ForEach(ctx, func(i int) error { return createClaim(ctx, env.Client, cfg.Claim(i)) }); err != nil {
		return time.Time{}, err
	}
	select {
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	case <-time.After(cfg.PVDelay):
	}
	start := time.Now()
	return start, env.ForEach(ctx, func(i int) error {
		env.Started(cfg.name(i))
		return createVolume(ctx, env.Client, cfg.Volume(i))
	})
}

// WritesAfterStart: the N PVs, and 4 writes per bind.
func (pvcFirst) WritesAfterStart(n int) int { return n + 4*n }

func (pvcFirst) CheckBind(c *Config, claim *v1.PersistentVolumeClaim) string {
	return ownVolume(c, claim)
}
