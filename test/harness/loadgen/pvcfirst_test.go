package loadgen

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// pvc-first creates every claim, waits PVDelay, then the volumes; the clock and each claim's
// latency start at the volumes, not at the claims.
func TestPVCFirstCreatesClaimsThenVolumesAfterTheDelay(t *testing.T) {
	cfg := Config{Scenario: ScenarioPVCFirst, Namespace: "ns", Prefix: "f", Count: 3, Concurrency: 2, PVDelay: 50 * time.Millisecond}
	client := fake.NewClientset()
	var lastClaim, firstVolume time.Time
	lock := make(chan struct{}, 1)
	client.PrependReactor("create", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		lock <- struct{}{}
		defer func() { <-lock }()
		switch action.GetResource().Resource {
		case "persistentvolumeclaims":
			if !firstVolume.IsZero() {
				t.Error("a claim created after a volume")
			}
			lastClaim = time.Now()
		case "persistentvolumes":
			if firstVolume.IsZero() {
				firstVolume = time.Now()
			}
		}
		return false, nil, nil
	})
	s, err := Lookup(ScenarioPVCFirst)
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Client: client, Config: &cfg, Watch: context.Background(), tracker: newBindTracker(cfg.Count)}
	start, err := s.Create(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if gap := firstVolume.Sub(lastClaim); gap < cfg.PVDelay {
		t.Errorf("volumes %s after the last claim, want at least PVDelay %s", gap, cfg.PVDelay)
	}
	if start.Before(lastClaim) {
		t.Error("the clock started before the volumes")
	}
	for i := 1; i <= cfg.Count; i++ {
		if at := env.tracker.startedCopy()[cfg.name(i)]; at.Before(start) {
			t.Errorf("claim %d's latency starts at %v, before the clock", i, at)
		}
		if claim := cfg.Claim(i); claim.Spec.VolumeName != cfg.name(i) {
			t.Errorf("claim %d names %q, want its own volume", i, claim.Spec.VolumeName)
		}
	}
}
