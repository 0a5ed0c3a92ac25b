package invariants

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// check runs every check of this package on a state: the safety rules, and the settled ones when
// settled.
func check(p PlantedState, settled bool) []Rule {
	var found []Violation
	found = append(found, CheckTwoClaimsOnePV(p.Claims, nil)...)
	found = append(found, CheckOneClaimTwoPVs(p.Volumes, nil)...)
	pvs := map[string]*v1.PersistentVolume{}
	for _, pv := range p.Volumes {
		pvs[pv.Name] = pv
	}
	for _, claim := range p.Claims {
		pv := pvs[claim.Spec.VolumeName]
		if v := CheckLost(claim, pv); v != nil {
			found = append(found, *v)
		}
		if claim.Status.Phase == v1.ClaimBound && pv != nil {
			if v := CheckBound(claim, pv, Binding{}); v != nil {
				found = append(found, *v)
			}
		}
	}
	if settled {
		found = append(found, Settled(p.Volumes, p.Claims, Intent{})...)
	}
	var rules []Rule
	for _, v := range found {
		rules = append(rules, v.Rule)
	}
	return rules
}

// Every planted state breaks its rule, and a safety rule's state is broken before the run settles.
func TestPlantedStatesBreakTheirRules(t *testing.T) {
	seen := map[Rule]bool{}
	for _, p := range Planted() {
		if seen[p.Rule] {
			t.Errorf("%q planted twice", p.Rule)
		}
		seen[p.Rule] = true
		if got := check(p, p.Settled); !slices.Contains(got, p.Rule) {
			t.Errorf("planted %q: found %q", p.Rule, got)
		}
	}
}

// The same objects, bound as they should be, break nothing, settled or not.
func TestCorrectStateBreaksNothing(t *testing.T) {
	p := PlantedState{
		Volumes: vols(plantedPV("pv-1", "1Gi", v1.VolumeBound, "c-1"), plantedPV("pv-2", "2Gi", v1.VolumeBound, "c-2"),
			plantedPV("pv-3", "1Gi", v1.VolumeReleased, "c-9"), plantedPV("pv-4", "5Gi", v1.VolumeAvailable, "")),
		Claims: claims(plantedClaim("c-1", "1Gi", v1.ClaimBound, "pv-1"), plantedClaim("c-2", "2Gi", v1.ClaimBound, "pv-2"),
			plantedClaim("c-3", "10Gi", v1.ClaimPending, "")),
	}
	if got := check(p, true); len(got) != 0 {
		t.Errorf("a correct state broke %q", got)
	}
}

// A claim Lost while a re-created volume that cannot serve it names it is not a lost bind: the
// binder must not bind it again (LostRebound).
func TestLostClaimWhoseVolumeNoLongerFitsIsNotABindLost(t *testing.T) {
	claim := plantedClaim("c-1", "2Gi", v1.ClaimLost, "pv-1")
	if v := CheckLost(claim, plantedPV("pv-1", "1Gi", v1.VolumeAvailable, "c-1")); v != nil {
		t.Errorf("a volume too small counted as a bind lost: %s", v)
	}
	if v := CheckLost(claim, plantedPV("pv-1", "2Gi", v1.VolumeAvailable, "c-1")); v == nil {
		t.Errorf("a Lost claim whose volume fits and names it was not reported")
	}
}
