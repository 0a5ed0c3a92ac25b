package loadgen

import "testing"

// TestMatchedPairScenarioObjects: a matched pair names neither side, and a claim bound to another
// pair's volume is what matching may do: CheckBind accepts it (Verify checks one to one).
func TestMatchedPairScenarioObjects(t *testing.T) {
	s, err := Lookup("matched-pair-together")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Scenario: s.Name(), Namespace: "ns", Prefix: "t"}
	pv, pvc := cfg.Volume(3), cfg.Claim(3)
	s.Shape(&cfg, 3, pvc, pv)
	if pv.Spec.ClaimRef != nil || pvc.Spec.VolumeName != "" {
		t.Errorf("matched pair names its other side: claimRef %+v, volumeName %q", pv.Spec.ClaimRef, pvc.Spec.VolumeName)
	}
	pvc.Spec.VolumeName = cfg.name(7)
	if problem := s.CheckBind(&cfg, pvc); problem != "" {
		t.Errorf("claim 3 on volume 7: %q, want no problem", problem)
	}
	prebound, _ := Lookup("prebound-together")
	if problem := prebound.CheckBind(&cfg, pvc); problem == "" {
		t.Error("prebound claim on another pair's volume: want a problem")
	}
}
