package loadgen

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func boundPair(cfg *Config, i int, volumeName string, uid types.UID) (*v1.PersistentVolume, *v1.PersistentVolumeClaim) {
	pvc := cfg.Claim(i)
	pvc.UID = uid
	pvc.Spec.VolumeName = volumeName
	pvc.Status.Phase = v1.ClaimBound
	pv := cfg.Volume(i)
	pv.Status.Phase = v1.VolumeBound
	pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: pvc.Namespace, Name: pvc.Name, UID: uid}
	return pv, pvc
}

func TestVerify(t *testing.T) {
	cfg := Config{Scenario: ScenarioPrebound, Namespace: "ns", Prefix: "t"}
	pv1, pvc1 := boundPair(&cfg, 1, cfg.name(1), "u1")
	pv2, pvc2 := boundPair(&cfg, 2, cfg.name(2), "u2")

	tests := []struct {
		name    string
		mutate  func(pv2 *v1.PersistentVolume, pvc2 *v1.PersistentVolumeClaim)
		wantErr string
	}{
		{name: "one to one", mutate: func(*v1.PersistentVolume, *v1.PersistentVolumeClaim) {}},
		{name: "claim pending", mutate: func(_ *v1.PersistentVolume, c *v1.PersistentVolumeClaim) { c.Status.Phase = v1.ClaimPending }, wantErr: "is Pending"},
		{name: "claimRef of another claim", mutate: func(pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) { pv.Spec.ClaimRef.Name = pvc1.Name }, wantErr: "whose claimRef"},
		{name: "stale claimRef UID", mutate: func(pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) { pv.Spec.ClaimRef.UID = "old" }, wantErr: "whose claimRef"},
		{name: "two claims on one volume", mutate: func(_ *v1.PersistentVolume, c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = pv1.Name }, wantErr: "named by 2 claims"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pv, pvc := pv2.DeepCopy(), pvc2.DeepCopy()
			tc.mutate(pv, pvc)
			client := fake.NewClientset(pv1, pvc1, pv, pvc)
			err := Verify(context.Background(), client, cfg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	r := &Result{}
	for i := 1; i <= 100; i++ {
		r.Samples = append(r.Samples, Sample{Latency: time.Duration(i) * time.Millisecond})
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := r.Percentile(p); got != want {
			t.Errorf("p%v = %s, want %s", p, got, want)
		}
	}
	if got := (&Result{}).Percentile(50); got != 0 {
		t.Errorf("empty result p50 = %s, want 0", got)
	}
}
