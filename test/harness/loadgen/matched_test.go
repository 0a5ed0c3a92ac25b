package loadgen

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// matched creates the volumes before the clock and claims that name none; any one-to-one
// binding passes Verify.
func TestMatchedCreatesVolumesThenUnnamedClaims(t *testing.T) {
	cfg := Config{Scenario: ScenarioMatched, Namespace: "ns", Prefix: "m", Count: 4, Concurrency: 2}
	client := fake.NewClientset()
	s, err := Lookup(ScenarioMatched)
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Client: client, Config: &cfg, Watch: context.Background(), tracker: newBindTracker(cfg.Count)}
	if _, err := s.Create(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	pvs, _ := client.CoreV1().PersistentVolumes().List(context.Background(), metav1.ListOptions{})
	pvcs, _ := client.CoreV1().PersistentVolumeClaims("ns").List(context.Background(), metav1.ListOptions{})
	if len(pvs.Items) != 4 || len(pvcs.Items) != 4 {
		t.Fatalf("%d volumes and %d claims, want 4 and 4", len(pvs.Items), len(pvcs.Items))
	}
	for _, c := range pvcs.Items {
		if c.Spec.VolumeName != "" {
			t.Errorf("claim %s names volume %q, want none", c.Name, c.Spec.VolumeName)
		}
	}
	// Claims 1 and 2 on each other's volumes: fine for matched, not for prebound.
	pv1, pvc1 := boundPair(&cfg, 1, cfg.name(2), "u1")
	pv2, pvc2 := boundPair(&cfg, 2, cfg.name(1), "u2")
	pv1.Spec.ClaimRef, pv2.Spec.ClaimRef = pv2.Spec.ClaimRef, pv1.Spec.ClaimRef
	if err := Verify(context.Background(), fake.NewClientset(pv1, pvc1, pv2, pvc2), cfg); err != nil {
		t.Errorf("matched claims on each other's volumes: %v, want no error", err)
	}
	prebound := cfg
	prebound.Scenario = ScenarioPrebound
	if err := Verify(context.Background(), fake.NewClientset(pv1, pvc1, pv2, pvc2), prebound); err == nil || !strings.Contains(err.Error(), "own volume") {
		t.Errorf("prebound claims on each other's volumes: %v, want an error", err)
	}
}
