package torture

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fastpv/pv-controller-manager/test/invariants"
)

// Every state test/invariants plants fails the model's checker with its rule: a safety rule's
// state replayed commit by commit as users create the objects and the binder writes them into it,
// a settled rule's state checked as the end of a run.
func TestCheckerFailsEveryPlantedViolation(t *testing.T) {
	for _, p := range invariants.Planted() {
		t.Run(string(p.Rule), func(t *testing.T) {
			c := newChecker()
			if p.Settled {
				c.settled(p.Volumes, p.Claims)
			} else {
				replayPlanted(c, p)
			}
			if !slices.ContainsFunc(c.violations, func(v violation) bool { return v.Rule == p.Rule }) {
				t.Errorf("planted %q: the checker found %v", p.Rule, c.violations)
			}
		})
	}
}

// replayPlanted commits p's objects to c as the model's apiserver would: each created by a user
// (a volume with no claimRef, a claim naming no volume), then written by the binder into its
// planted state, volumes first; a planted Lost claim is Bound on its way.
func replayPlanted(c *checker, p invariants.PlantedState) {
	var rv int64
	commit := func(typ watch.EventType, resource string, old, obj runtime.Object, binder bool) {
		rv++
		c.observe(event{Type: typ, Resource: resource, Old: old, New: obj, RV: rv, Binder: binder})
	}
	created := map[string]runtime.Object{}
	for _, pv := range p.Volumes {
		fresh := pv.DeepCopy()
		fresh.Spec.ClaimRef, fresh.Status = nil, v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable}
		commit(watch.Added, resPV, nil, fresh, false)
		created[pv.Name] = fresh
	}
	for _, claim := range p.Claims {
		fresh := claim.DeepCopy()
		fresh.Spec.VolumeName, fresh.Status = "", v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}
		commit(watch.Added, resPVC, nil, fresh, false)
		created[invariants.ClaimKey(claim)] = fresh
	}
	for _, pv := range p.Volumes {
		commit(watch.Modified, resPV, created[pv.Name], pv, true)
	}
	for _, claim := range p.Claims {
		old := created[invariants.ClaimKey(claim)]
		if claim.Status.Phase == v1.ClaimLost {
			bound := claim.DeepCopy()
			bound.Status.Phase = v1.ClaimBound
			commit(watch.Modified, resPVC, old, bound, true)
			old = bound
		}
		commit(watch.Modified, resPVC, old, claim, true)
	}
}
