package torture

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// The end states of seed 1796164846233840766 (make torture, 2026-12-01): ns1/c-6 pre-bound to
// pv-0 was deleted and created again. Ours bound the first c-6 before its deletion (so pv-0, Retain,
// went Released and the second c-6 stays Pending); upstream, slower through the faults, had not
// bound the first, so it bound the second. Legitimate for ours; the same end with pv-0 free would not be.
func TestCompareEndsClaimRecreatedOverAReleasedVolume(t *testing.T) {
	ours := result{
		Claims:  map[string]string{"ns1/c-6": "Pending pv-0", "ns2/c-5": "Bound pv-1"},
		Volumes: map[string]string{"pv-0": "Released ns1/c-6", "pv-1": "Bound ns2/c-5"},
	}
	upstream := result{
		Claims:  map[string]string{"ns1/c-6": "Bound pv-0", "ns2/c-5": "Bound pv-1"},
		Volumes: map[string]string{"pv-0": "Bound ns1/c-6", "pv-1": "Bound ns2/c-5"},
	}
	if got, detail := compareEnds(ours, upstream); got != outcomeEarlierClaim {
		t.Errorf("Released from the earlier claim: outcome %q (%s), want %q", got, detail, outcomeEarlierClaim)
	}
	ours.Volumes["pv-0"] = "Available "
	if got, _ := compareEnds(ours, upstream); got != outcomeUpstreamMore {
		t.Errorf("pv-0 free and the claim Pending: outcome %q, want %q (a failure)", got, outcomeUpstreamMore)
	}
}

// Seed 1796299422631505052 (make torture, 2026-12-03): ns2/c-2 pre-bound to pv-1, whose reclaim
// policy is Delete, was deleted and created again under its name. Ours bound the first c-2 before its
// deletion, so pv-1 went Released and then Failed (the model has no deleter); upstream, slower, had
// not bound it, so it bound the second. A volume Released from one claim is never bound to another.
func TestCompareEndsClaimRecreatedOverAFailedVolume(t *testing.T) {
	ours := result{
		Claims:  map[string]string{"ns2/c-2": "Pending pv-1", "ns1/c-3": "Pending pv-1"},
		Volumes: map[string]string{"pv-1": "Failed ns2/c-2"},
	}
	upstream := result{
		Claims:  map[string]string{"ns2/c-2": "Bound pv-1", "ns1/c-3": "Pending pv-1"},
		Volumes: map[string]string{"pv-1": "Bound ns2/c-2"},
	}
	if got, detail := compareEnds(ours, upstream); got != outcomeEarlierClaim {
		t.Errorf("Failed from the earlier claim: outcome %q (%s), want %q", got, detail, outcomeEarlierClaim)
	}
}

// The model flags a binder that writes one object against one version again and again with no
// back-off (the loop of seeds 1796233121677576072 and 1796299422631514156), and not retries that
// back off or writes against new versions.
func TestNoteWriteFlagsAHotLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // virtual time: no gap between the writes
		s := newAPIServer()
		for i := range hotLoopBurst {
			if s.noteWrite("update/status", resPVC, "ns/c-1", "24") {
				t.Fatalf("flagged after %d writes, want more than %d", i+1, hotLoopBurst)
			}
		}
		if !s.noteWrite("update/status", resPVC, "ns/c-1", "24") || len(s.hotLoops) != 1 {
			t.Fatalf("%d writes against one version at one instant not flagged", hotLoopBurst+1)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		s := newAPIServer()
		for range 3 * hotLoopBurst {
			if s.noteWrite("update/status", resPVC, "ns/c-1", "24") {
				t.Fatalf("retries %s apart flagged", hotLoopGap)
			}
			time.Sleep(hotLoopGap)
		}
	})
	s := newAPIServer()
	for v := range 3 * hotLoopBurst {
		if s.noteWrite("update/status", resPVC, "ns/c-1", fmt.Sprint(v)) {
			t.Fatalf("writes against new versions flagged")
		}
	}
}

// Torture bug 20 (seed 1796307058279983682): a placement finding upstream's arm shows identically
// is reported, not failed; the same finding in ours alone fails the seed.
func TestSharedPlacementFindingIsReported(t *testing.T) {
	v := violation{Rule: ruleNoFit, Detail: "ns1/c-7 on pv-5: the volume is on node-a, the claim's pod on node-b", RV: 30}
	ours := result{Arm: armOurs, Violations: []violation{v}, Claims: map[string]string{}, Volumes: map[string]string{}}
	upstream := result{Arm: armUpstream, Violations: []violation{v}, Claims: map[string]string{}, Volumes: map[string]string{}}
	if fails := newSummary().add(ours, upstream); len(fails) != 0 {
		t.Errorf("shared placement finding failed the seed: %v", fails)
	}
	upstream.Violations = nil
	ours.Arm, upstream.Arm = armOurs, armUpstream
	if fails := newSummary().add(ours, upstream); len(fails) != 1 {
		t.Errorf("ours alone: %d failures, want 1", len(fails))
	}
	// On a volume a user made to reserve the claim, upstream's binder has the same path: reported.
	ours.Violations = []violation{{Rule: ruleNoFit, Detail: v.Detail + " (the volume reserves the claim by claimRef)", RV: 30}}
	if fails := newSummary().add(ours, upstream); len(fails) != 0 {
		t.Errorf("placement on a reserving volume failed the seed: %v", fails)
	}
}

// On a fault-free seed where both arms did the same work (the same end, phase changes and binds),
// ours writing more than upstream fails the seed; where ours bound another volume than upstream
// (seed 1796362331656846360 on v1.38: ours bound an existing volume and later recycled it, upstream
// provisioned one), the writes are not compared.
func TestMoreWritesForTheSameWorkFail(t *testing.T) {
	same := func(arm string, pvWrites int, pair string) result {
		return result{
			Arm: arm, Faults: (faultConfig{}).String(),
			Claims: map[string]string{"ns1/c-0": "Bound pv-0"}, Volumes: map[string]string{"pv-0": "Bound ns1/c-0"},
			Transitions: map[string]int{"pv Bound": 1, "pvc Bound": 1},
			BindPairs:   map[string]int{pair: 1},
			Writes:      map[string]int{"update persistentvolumes": pvWrites, "update/status persistentvolumes": 1, "update persistentvolumeclaims": 1, "update/status persistentvolumeclaims": 1},
		}
	}
	if fails := newSummary().add(same(armOurs, 1, "ns1/c-0 -> pv-0"), same(armUpstream, 1, "ns1/c-0 -> pv-0")); len(fails) != 0 {
		t.Errorf("the same writes: %v", fails)
	}
	if fails := newSummary().add(same(armOurs, 2, "ns1/c-0 -> pv-0"), same(armUpstream, 1, "ns1/c-0 -> pv-0")); len(fails) != 1 {
		t.Errorf("ours one write more for the same work: %d failures, want 1", len(fails))
	}
	if fails := newSummary().add(same(armOurs, 2, "ns1/c-0 -> pv-1"), same(armUpstream, 1, "ns1/c-0 -> pv-0")); len(fails) != 0 {
		t.Errorf("another volume bound: writes compared anyway: %v", fails)
	}
}

// Seed 56 with protection (2026-12-04): ns2/c-10 pre-bound to pv-14; the user deleted pv-14.
// Upstream had bound it just before, so pv-protection holds it Bound; ours had not, so pv-14 went
// as soon as it was deleted and the claim waits for it. A race of the deletion, not a failure;
// the same end with pv-14 still there and free would be one.
func TestCompareEndsPreboundVolumeDeletedBeforeOursBoundIt(t *testing.T) {
	ours := result{
		Claims:  map[string]string{"ns2/c-10": "Pending pv-14"},
		Volumes: map[string]string{},
	}
	upstream := result{
		Claims:  map[string]string{"ns2/c-10": "Bound pv-14"},
		Volumes: map[string]string{"pv-14": "Bound ns2/c-10"},
	}
	if got, detail := compareEnds(ours, upstream); got != outcomeDeletedFirst {
		t.Errorf("pv-14 deleted: outcome %q (%s), want %q", got, detail, outcomeDeletedFirst)
	}
	ours.Volumes["pv-14"] = "Available "
	if got, _ := compareEnds(ours, upstream); got != outcomeUpstreamMore {
		t.Errorf("pv-14 free and the claim Pending: outcome %q, want %q (a failure)", got, outcomeUpstreamMore)
	}
	// Seed 1796413630941399323 (30-minute run, 2026-12-04): a pv-14 created again after the
	// deletion, of a class the claim does not fit (else the settled liveness check fails ours).
	ours.Recreated = []string{"pv-14"}
	if got, detail := compareEnds(ours, upstream); got != outcomeDeletedFirst {
		t.Errorf("pv-14 deleted and created again: outcome %q (%s), want %q", got, detail, outcomeDeletedFirst)
	}
}

// Seed 348 with protection (2026-12-04): ns1/c-5, used by a pod, was deleted and lingers. Upstream
// had bound it; ours, behind the faults, had not when the deletion came, and starts no bind for a
// claim being deleted. The same end with the claim not being deleted is not excused so (the
// settled liveness check fails it: a free PV fits a Pending claim).
func TestCompareEndsClaimBeingDeletedLeftPending(t *testing.T) {
	ours := result{
		Claims:   map[string]string{"ns1/c-5": "Pending"},
		Volumes:  map[string]string{"pv-1": "Available "},
		Deleting: []string{"ns1/c-5"},
	}
	upstream := result{
		Claims:  map[string]string{"ns1/c-5": "Bound pv-1"},
		Volumes: map[string]string{"pv-1": "Bound ns1/c-5"},
	}
	if got, detail := compareEnds(ours, upstream); got != outcomeDeletingClaim {
		t.Errorf("claim being deleted: outcome %q (%s), want %q", got, detail, outcomeDeletingClaim)
	}
	ours.Deleting = nil
	if got, _ := compareEnds(ours, upstream); got == outcomeDeletingClaim {
		t.Errorf("claim not being deleted: outcome %q", got)
	}
}

// Seed 1796395724033013806 (make torture, 2026-12-04): four claims pre-bound to pv-4. Ours gave it to
// ns1/c-5, upstream to ns1/c-4; the user deleted c-5 and then pv-4 (Released in ours, so gone; Bound
// in upstream's arm, so kept by pv-protection) and created a pv-4 of another class. Ours' c-4 stays
// Pending beside a pv-4 it does not fit: claims that competed for one volume, not a failure. The
// same end where no other claim ever had pv-4 is one.
func TestCompareEndsPreboundVolumeWentToAnotherClaim(t *testing.T) {
	ours := result{
		Claims:    map[string]string{"ns1/c-4": "Pending pv-4"},
		Volumes:   map[string]string{"pv-4": "Available "},
		BindPairs: map[string]int{"ns1/c-5 -> pv-4": 1},
	}
	upstream := result{
		Claims:    map[string]string{"ns1/c-4": "Bound pv-4"},
		Volumes:   map[string]string{"pv-4": "Bound ns1/c-4"},
		BindPairs: map[string]int{"ns1/c-4 -> pv-4": 1},
	}
	if got, detail := compareEnds(ours, upstream); got != outcomeContested {
		t.Errorf("pv-4 went to another claim first: outcome %q (%s), want %q", got, detail, outcomeContested)
	}
	ours.BindPairs = map[string]int{"ns1/c-4 -> pv-3": 1}
	if got, _ := compareEnds(ours, upstream); got != outcomeUpstreamMore {
		t.Errorf("no other claim had pv-4: outcome %q, want %q (a failure)", got, outcomeUpstreamMore)
	}
}

// Seed 583 (the offer's first draft, patch 0018): ours left ns2/pool-c-2 Pending, its volume given
// to a claim whose own volume stayed free; upstream bound it. A failure, not a competition; the
// same end without that finding is one ours lost by order.
func TestCompareEndsWorseFitFails(t *testing.T) {
	ours := result{
		Claims:    map[string]string{"ns2/pool-c-2": "Pending", "ns2/pool-c-0": "Bound pool-pv-2"},
		Volumes:   map[string]string{"pool-pv-2": "Bound ns2/pool-c-0", "pool-pv-0": "Available "},
		BindPairs: map[string]int{"ns2/pool-c-0 -> pool-pv-2": 1},
		WorseFits: map[string]string{"ns2/pool-c-2": "pool-pv-2 (12Gi) went to ns2/pool-c-0 (6Gi), which pool-pv-0 (6Gi, still free) fits better"},
	}
	upstream := result{
		Claims:  map[string]string{"ns2/pool-c-2": "Bound pool-pv-2", "ns2/pool-c-0": "Bound pool-pv-0"},
		Volumes: map[string]string{"pool-pv-2": "Bound ns2/pool-c-2", "pool-pv-0": "Bound ns2/pool-c-0"},
	}
	if got, detail := compareEnds(ours, upstream); got != outcomeWorseFit {
		t.Errorf("outcome %q (%s), want %q", got, detail, outcomeWorseFit)
	}
	ours.Arm, upstream.Arm = armOurs, armUpstream
	if fails := newSummary().add(ours, upstream); len(fails) != 1 {
		t.Errorf("findings %v, want the worse fit", fails)
	}
	ours.WorseFits = nil
	if got, _ := compareEnds(ours, upstream); got == outcomeWorseFit || got == outcomeUpstreamMore {
		t.Errorf("without the worse fit: outcome %q, want a competition", got)
	}
}

// Seed 1796413082435382368 (30-minute run, 2026-12-04): a volume a user bound by UID to a claim
// that went to another volume; ours, faster, unbound it (upstream's unbindVolume: the UID cleared,
// then Available) before the user deleted it, upstream's resync came after the deletion. Ours
// wrote one more, for an unbind upstream never did: the unbind counts as a change of its own, and
// the writes of runs that differ in it are not compared.
func TestUnbindIsWorkOfItsOwn(t *testing.T) {
	c := newChecker()
	bound := choiceVolume("pv-0", "2Gi")
	bound.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns2", Name: "c-2", UID: "uid-7-c-2"}
	unbound := bound.DeepCopy()
	unbound.Spec.ClaimRef.UID = ""
	c.countTransition(event{Binder: true, Type: watch.Modified, Resource: resPV, Old: bound, New: unbound})
	if c.transitions["pv unbind"] != 1 {
		t.Errorf("transitions %v, want one unbind", c.transitions)
	}
}

// Seed 1796514712451020555 (30-minute run, 2026-12-05; 5 of 90 replays on a loaded machine): a
// claim created after the volume that reserves it by name. In ours' arm the claim's sync came
// before the volume was in the binder's cache, so the binder handed the claim to its
// class's provisioner (one claim update) and bound it to the volume right after; upstream's arm saw
// the volume first. Same end state, phase changes and binds, one write more: the hand-over to a
// provisioner counts as a change of its own, and runs that differ in it are not compared.
func TestHandOverToAProvisionerIsWorkOfItsOwn(t *testing.T) {
	c := newChecker()
	pending := choiceClaim("ns2/c-1", "3425Mi")
	handedOver := pending.DeepCopy()
	handedOver.Annotations = map[string]string{annStorageProvisioner: "torture.example.com/ext", annBetaStorageProvider: "torture.example.com/ext"}
	c.countTransition(event{Binder: true, Type: watch.Modified, Resource: resPVC, Old: pending, New: handedOver})
	if c.transitions["pvc to provisioner"] != 1 {
		t.Errorf("transitions %v, want one hand-over to a provisioner", c.transitions)
	}
	// The annotation written again, or kept through the bind, is not a second hand-over.
	bound := handedOver.DeepCopy()
	bound.Spec.VolumeName, bound.Status.Phase = "pv-5", v1.ClaimBound
	c.countTransition(event{Binder: true, Type: watch.Modified, Resource: resPVC, Old: handedOver, New: bound})
	if c.transitions["pvc to provisioner"] != 1 || c.transitions["pvc Bound"] != 1 {
		t.Errorf("transitions %v, want one hand-over and one Bound", c.transitions)
	}
}
