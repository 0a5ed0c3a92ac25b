package torture

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fastpv/pv-controller-manager/test/invariants"
)

func choiceVolume(name, size string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes: modes,
		},
	}
}

// upstreamChoice follows FindMatchingVolume: the group of the fewest access modes with a fit
// first, then the smallest volume in it; ties make the choice depend on cache order.
func TestUpstreamChoice(t *testing.T) {
	rwo, rox, rwx := v1.ReadWriteOnce, v1.ReadOnlyMany, v1.ReadWriteMany
	tests := []struct {
		name       string
		fits       []*v1.PersistentVolume
		want       string
		wantUnique bool
	}{
		{"none", nil, "", false},
		{"smallest of one group", []*v1.PersistentVolume{choiceVolume("a", "5Gi", rwo), choiceVolume("b", "2Gi", rwo)}, "b", true},
		{"two of the smallest size", []*v1.PersistentVolume{choiceVolume("a", "2Gi", rwo), choiceVolume("b", "2Gi", rwo)}, "a", false},
		{"the group of fewer modes wins over a smaller volume", []*v1.PersistentVolume{choiceVolume("a", "5Gi", rwo), choiceVolume("b", "1Gi", rwo, rox)}, "a", true},
		{"two groups of as many modes", []*v1.PersistentVolume{choiceVolume("a", "5Gi", rwo, rox), choiceVolume("b", "1Gi", rwo, rwx)}, "", false},
	}
	for _, tc := range tests {
		best, unique := upstreamChoice(tc.fits)
		got := ""
		if best != nil {
			got = best.Name
		}
		if unique != tc.wantUnique || tc.wantUnique && got != tc.want {
			t.Errorf("%s: got %q unique %t, want %q unique %t", tc.name, got, unique, tc.want, tc.wantUnique)
		}
	}
}

// Seed 562 (2026-12-04): ours gave a RWO claim a new 5Gi RWO volume still Pending (its offer,
// patch 0018) while a 2Gi RWO+ROX volume was Available. Upstream's rules rank the group of fewer
// modes first: that volume, once Available, would be upstream's pick too. Not worse.
func TestUpstreamOrderRanksFewerModesFirst(t *testing.T) {
	rwo, rox := v1.ReadWriteOnce, v1.ReadOnlyMany
	offered, available := choiceVolume("pv-26", "5Gi", rwo), choiceVolume("pv-12", "2Gi", rwo, rox)
	if upstreamOrder(offered, available) >= 0 {
		t.Errorf("a RWO volume of 5Gi should rank before a RWO+ROX volume of 2Gi")
	}
	if upstreamOrder(choiceVolume("a", "5Gi", rwo), choiceVolume("b", "2Gi", rwo)) <= 0 {
		t.Errorf("in one group the smaller ranks first")
	}
}

func choiceClaim(key, size string) *v1.PersistentVolumeClaim {
	ns, name, _ := strings.Cut(key, "/")
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

func inPhase(pv *v1.PersistentVolume, phase v1.PersistentVolumePhase) *v1.PersistentVolume {
	pv.UID = types.UID("uid-" + pv.Name)
	pv.Status.Phase = phase
	return pv
}

// Bug 10 (make e2e-kind, 2026-12-02): a 1500Mi claim given the 5Gi volume while the 2Gi one,
// created first, still waited for its Available write. Ours (patch 0017) waits for it; the rule
// holds ours' arm alone to that, and lets a competitor or an exact fit go.
func TestCheckBetterComingHoldsOursToAVolumeAboutToTurnAvailable(t *testing.T) {
	rwo := v1.ReadWriteOnce
	run := func(strict bool, chosenSize string, extra ...*v1.PersistentVolumeClaim) []violation {
		c := newChecker()
		c.strictChoice = strict
		claim := choiceClaim("ns1/c-1", "1500Mi")
		c.claims[invariants.ClaimKey(claim)], c.byUID[claim.UID] = claim, claim
		for _, o := range extra {
			c.claims[invariants.ClaimKey(o)], c.byUID[o.UID] = o, o
		}
		large := inPhase(choiceVolume("pv-large", chosenSize, rwo), v1.VolumeAvailable)
		c.pvs["pv-large"], c.pvs["pv-fit"] = large, inPhase(choiceVolume("pv-fit", "2Gi", rwo), v1.VolumePending)
		c.checkBetterComing(7, large, claim)
		return c.violations
	}
	if v := run(true, "5Gi"); len(v) != 1 || v[0].Rule != ruleLargerWhileBetterComing {
		t.Errorf("ours given 5Gi while 2Gi was Pending: %v, want one %q", v, ruleLargerWhileBetterComing)
	}
	if v := run(false, "5Gi"); len(v) != 0 {
		t.Errorf("upstream's arm is not held to it: %v", v)
	}
	if v := run(true, "1500Mi"); len(v) != 0 {
		t.Errorf("an exact fit is never held back: %v", v)
	}
	if v := run(true, "5Gi", choiceClaim("ns1/c-2", "1Gi")); len(v) != 0 {
		t.Errorf("another Pending claim fits the 2Gi volume (a competitor, or its offer): %v", v)
	}
}

// Bug 17 (make e2e-kind, kind-kubeadm, 2026-12-02): the 4Gi claim given the 5Gi volume while its
// own 4Gi volume was free, and the 5Gi claim left Pending with the 4Gi volume still Available at
// the end. A better volume that someone took meanwhile, or a Pending claim the given volume fits
// no better, is no such finding.
func TestWorseFitsFindsAVolumeGivenAwayForNothing(t *testing.T) {
	rwo := v1.ReadWriteOnce
	run := func(endOwn v1.PersistentVolumePhase, pendingSize string) map[string]string {
		c := newChecker()
		small, large := choiceClaim("ns1/c-4", "4Gi"), choiceClaim("ns1/c-5", pendingSize)
		for _, o := range []*v1.PersistentVolumeClaim{small, large} {
			c.claims[invariants.ClaimKey(o)], c.byUID[o.UID] = o, o
		}
		own, given := inPhase(choiceVolume("pv-4", "4Gi", rwo), v1.VolumePending), inPhase(choiceVolume("pv-5", "5Gi", rwo), v1.VolumeAvailable)
		c.pvs["pv-4"], c.pvs["pv-5"] = own, given
		c.noteWorseFit(given, small)

		bound := given.DeepCopy()
		bound.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns1", Name: "c-4", UID: small.UID}
		bound.Status.Phase = v1.VolumeBound
		smallEnd := small.DeepCopy()
		smallEnd.Spec.VolumeName, smallEnd.Status.Phase = "pv-5", v1.ClaimBound
		ownEnd := inPhase(choiceVolume("pv-4", "4Gi", rwo), endOwn)
		if endOwn == v1.VolumeBound {
			ownEnd.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns2", Name: "other", UID: "uid-other"}
		}
		return c.worseFits([]*v1.PersistentVolume{bound, ownEnd}, []*v1.PersistentVolumeClaim{smallEnd, large})
	}
	if got := run(v1.VolumeAvailable, "5Gi"); got["ns1/c-5"] == "" {
		t.Errorf("the 5Gi claim left Pending while pv-4 stayed free: got %v", got)
	}
	if got := run(v1.VolumeBound, "5Gi"); len(got) != 0 {
		t.Errorf("pv-4 went to another claim meanwhile: got %v, want none", got)
	}
	if got := run(v1.VolumeAvailable, "3Gi"); len(got) != 0 {
		t.Errorf("a Pending claim asking for less than the taker: got %v, want none", got)
	}
}
