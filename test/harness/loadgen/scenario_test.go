package loadgen

import (
	"slices"
	"testing"
)

// The registry is what pv-load --list and make bench read: every scenario is complete, the
// default bench set is the one the README's table reports, and each order of the pair scenarios
// is a scenario.
func TestRegistry(t *testing.T) {
	var defaults []string
	for _, s := range Scenarios() {
		if s.Help() == "" {
			t.Errorf("%s: no help", s.Name())
		}
		if b := s.Bench(); !slices.Contains([]string{"COUNT", "PVC_FIRST_COUNT", "PREBOUND_COUNTS"}, b.Counts) {
			t.Errorf("%s: bench counts %q is not a variable of hack/bench/bench.sh", s.Name(), b.Counts)
		} else if b.Default {
			defaults = append(defaults, s.Name())
		}
		// (resident's pairs are written Bound by the loader: no binder's 4 writes per bind.)
		if w := s.WritesAfterStart(100); w < 500 && s.Name() != ScenarioResident {
			t.Errorf("%s: %d writes after the start for 100 claims, want at least the claims and 4 per bind", s.Name(), w)
		}
		if got, err := Lookup(s.Name()); err != nil || got.Name() != s.Name() {
			t.Errorf("Lookup(%q) = %v, %v", s.Name(), got, err)
		}
	}
	want := []string{"churn", "claimref", "matched", "prebound", "provisioning", "pvc-first", "wffc"}
	if !slices.Equal(defaults, want) {
		t.Errorf("default bench scenarios %v, want %v", defaults, want)
	}
	for _, name := range []string{"prebound-claim-first", "prebound-together", "claimref-claim-first", "claimref-together",
		"matched-pair", "matched-pair-claim-first", "matched-pair-together"} {
		if _, err := Lookup(name); err != nil {
			t.Error(err)
		}
	}
	if _, err := Lookup("sideways"); err == nil {
		t.Error("an unknown scenario must be an error")
	}
}
