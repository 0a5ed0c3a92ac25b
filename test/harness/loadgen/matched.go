package loadgen

import (
	"context"
	"time"
)

// ScenarioMatched: N volumes first, then N claims without spec.volumeName that the binder
// matches; latency from the claim's create call to Bound.
const ScenarioMatched = "matched"

type matched struct{ base }

func init() { Register(matched{}) }

func (matched) Name() string { return ScenarioMatched }
func (matched) Help() string {
	return "N PVs first, then N claims without volumeName that the binder matches"
}

func (matched) Create(ctx context.Context, env *Env) (time.Time, error) {
	cfg := env.Config
	if err := env.ForEach(ctx, func(i int) error { return createVolume(ctx, env.Client, cfg.Volume(i)) }); err != nil {
		return time.Time{}, err
	}
	start := time.Now()
	return start, env.ForEach(ctx, func(i int) error {
		env.Started(cfg.name(i))
		return createClaim(ctx, env.Client, cfg.Claim(i))
	})
}

// WritesAfterStart: the N claims (the PVs exist before the clock), and 4 writes per bind.
func (matched) WritesAfterStart(n int) int { return n + 4*n }
