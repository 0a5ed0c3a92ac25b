package loadgen

import (
	"context"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
)

// TestClaimRefScenarioObjects: in the claimref scenario the volume reserves its claim by
// namespace and name (no UID, as operators write it) and the claim names no volume; Verify still
// wants each claim on its own volume.
func TestClaimRefScenarioObjects(t *testing.T) {
	cfg := Config{Scenario: ScenarioClaimRef, Namespace: "ns", Prefix: "t"}
	pv, pvc := cfg.Volume(3), cfg.Claim(3)
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != "ns" || ref.Name != pvc.Name || ref.UID != "" {
		t.Errorf("volume claimRef %+v, want ns/%s without UID", pv.Spec.ClaimRef, pvc.Name)
	}
	if pvc.Spec.VolumeName != "" {
		t.Errorf("claim names volume %q, want none", pvc.Spec.VolumeName)
	}
	if prebound := (&Config{Scenario: ScenarioPrebound, Namespace: "ns", Prefix: "t"}).Volume(3); prebound.Spec.ClaimRef != nil {
		t.Errorf("prebound volume has claimRef %+v, want none", prebound.Spec.ClaimRef)
	}

	// Claims 1 and 2 bound the wrong way round, each pair consistent in itself.
	pv1, pvc1 := boundPair(&cfg, 1, cfg.name(2), "u1")
	pv2, pvc2 := boundPair(&cfg, 2, cfg.name(1), "u2")
	pv1.Spec.ClaimRef, pv2.Spec.ClaimRef = pv2.Spec.ClaimRef, pv1.Spec.ClaimRef
	err := Verify(context.Background(), fake.NewClientset(pv1, pvc1, pv2, pvc2), cfg)
	if err == nil || !strings.Contains(err.Error(), "not to its own volume") {
		t.Errorf("claims swapped between reserved volumes: %v, want an error", err)
	}
}
