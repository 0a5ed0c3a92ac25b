package torture

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/fastpv/pv-controller-manager/test/invariants"
)

// violation is an invariant broken at a commit (RV) or at the end (RV 0): test/invariants' type.
type violation = invariants.Violation

// The rules (test/invariants). Safety rules are checked at every commit; the settled ones once the
// run is quiet.
const (
	ruleTwoClaimsOnePV     = invariants.TwoClaimsOnePV
	ruleOneClaimTwoPVs     = invariants.OneClaimTwoPVs
	ruleRefsDisagree       = invariants.RefsDisagree
	ruleLostRebound        = invariants.LostRebound
	rulePreboundElsewhere  = invariants.PreboundElsewhere
	ruleReservedElsewhere  = invariants.ReservedElsewhere
	ruleRetainedRebound    = invariants.RetainedRebound
	ruleBoundLost          = invariants.BoundLost
	ruleBoundTakenAway     = invariants.BoundTakenAway
	ruleVolumeNameChanged  = invariants.VolumeNameChanged
	ruleDeletingClaimBound = invariants.DeletingClaimBound
	ruleDeletingPVBound    = invariants.DeletingPVBound
	ruleReleasedEarly      = invariants.ReleasedEarly
	ruleHotLoop            = invariants.HotLoop
	ruleNoFit              = invariants.NoFit
)

// checker follows every committed change of one arm's run and checks the safety invariants
// against its own model of what users asked for (not the binder's matching code).
type checker struct {
	start  time.Time
	pvs    map[string]*v1.PersistentVolume
	claims map[string]*v1.PersistentVolumeClaim // namespace/name
	byUID  map[types.UID]*v1.PersistentVolumeClaim
	// userPrebound: claim UID -> spec.volumeName the user created it with.
	userPrebound map[types.UID]string
	// userReserved: PV UID -> namespace/name its claimRef named when a user, kube-scheduler or the
	// provisioner set it.
	userReserved map[types.UID]string
	// userBound: PV UID -> the UID of the claim it was created naming, when that claim already
	// named the volume in spec.volumeName: a user bound the two (a volume restored from a backup
	// for a claim bound to its namesake); the binder only completes the claim's status.
	userBound map[types.UID]types.UID
	// retained: PV name -> the UID of the claim it was Released from, while the policy is Retain.
	retained map[string]types.UID
	// boundTo: claim UID -> the UID of the volume it was Bound to.
	boundTo     map[types.UID]types.UID
	binds       int
	violations  []violation
	trace       func(e event) // replays print every commit
	seen        map[string]bool
	transitions map[string]int
	// bindPairs counts the binds by "namespace/name -> volume name": two runs that bound the same
	// claims to the same volumes made the same choices, and only then are their writes compared.
	bindPairs map[string]int
	// deletedAt: the resourceVersion at which an object (by UID) was marked for deletion.
	deletedAt map[types.UID]int64
	// sawBefore tells whether the binder's informer of a resource had delivered a resourceVersion
	// at an earlier instant (apiServer.sawBefore); nil: it always had.
	sawBefore func(resource string, rv int64) bool
	// strictChoice holds the arm to ours' promise on volumes about to turn Available
	// (checkBetterComing).
	strictChoice bool
	// pvCreates counts the volumes created under each name.
	pvCreates map[string]int
	// matchedBinds: the matched binds made while a better volume was free (noteWorseFit).
	matchedBinds []matchedBindRecord
}

func (c *checker) binderKnew(resource string, rv int64) bool {
	return c.sawBefore == nil || c.sawBefore(resource, rv)
}

// noteDeletion records when an object was marked for deletion.
func (c *checker) noteDeletion(e event, old, obj metav1.Object) {
	if old.GetDeletionTimestamp() == nil && obj.GetDeletionTimestamp() != nil {
		if c.deletedAt == nil {
			c.deletedAt = map[types.UID]int64{}
		}
		c.deletedAt[obj.GetUID()] = e.RV
	}
}

func newChecker() *checker {
	return &checker{
		start: time.Now(), pvs: map[string]*v1.PersistentVolume{}, claims: map[string]*v1.PersistentVolumeClaim{},
		byUID: map[types.UID]*v1.PersistentVolumeClaim{}, userPrebound: map[types.UID]string{},
		userReserved: map[types.UID]string{}, userBound: map[types.UID]types.UID{}, retained: map[string]types.UID{}, boundTo: map[types.UID]types.UID{},
	}
}

// fail records a violation once: a broken state seen again at later commits is the same one.
func (c *checker) fail(rv int64, rule invariants.Rule, format string, args ...any) {
	detail := fmt.Sprintf(format, args...)
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if c.seen[string(rule)+detail] {
		return
	}
	c.seen[string(rule)+detail] = true
	c.violations = append(c.violations, violation{Rule: rule, Detail: detail, RV: rv, At: time.Since(c.start).String()})
}

// observe is the apiServer's observer: called for each commit, in order, under the store's lock.
func (c *checker) observe(e event) {
	if c.trace != nil {
		c.trace(e)
	}
	if e.Binder && e.Type == watch.Modified {
		c.countTransition(e)
	}
	switch e.Resource {
	case resPV:
		c.observeVolume(e, !e.Binder)
	case resPVC:
		c.observeClaim(e)
	default:
		return
	}
	c.checkOneToOne(e.RV)
}

func (c *checker) observeVolume(e event, byUser bool) {
	pv := e.New.(*v1.PersistentVolume)
	switch e.Type {
	case watch.Added:
		c.pvs[pv.Name] = pv
		if c.pvCreates == nil {
			c.pvCreates = map[string]int{}
		}
		c.pvCreates[pv.Name]++
		if pv.Spec.ClaimRef != nil {
			c.userReserved[pv.UID] = invariants.RefKey(pv.Spec.ClaimRef)
			if claim := c.byUID[invariants.RefUID(pv)]; claim != nil && claim.Spec.VolumeName == pv.Name {
				c.userBound[pv.UID] = claim.UID
			}
		}
		return
	case watch.Deleted:
		delete(c.pvs, pv.Name)
		delete(c.retained, pv.Name)
		delete(c.userReserved, pv.UID)
		delete(c.userBound, pv.UID)
		return
	}
	old := e.Old.(*v1.PersistentVolume)
	c.pvs[pv.Name] = pv
	c.noteDeletion(e, old, pv)
	if byUser {
		// An operator's or kube-scheduler's claimRef is the user's word from now on.
		if invariants.RefKey(old.Spec.ClaimRef) != invariants.RefKey(pv.Spec.ClaimRef) {
			delete(c.retained, pv.Name)
			if pv.Spec.ClaimRef != nil {
				c.userReserved[pv.UID] = invariants.RefKey(pv.Spec.ClaimRef)
			} else {
				delete(c.userReserved, pv.UID)
			}
		}
		return
	}
	if invariants.RefUID(old) == "" && invariants.RefUID(pv) != "" {
		if claim := c.byUID[invariants.RefUID(pv)]; claim != nil {
			c.checkChoice(e.RV, old, claim)
			c.checkBetterComing(e.RV, old, claim)
			c.noteWorseFit(old, claim)
		}
		// The binder gave a volume that named no claim to a claim already Bound to (or Lost
		// from) a volume of that name: a re-created volume, or a cache behind the API.
		if claim := c.byUID[invariants.RefUID(pv)]; claim != nil && claim.Spec.VolumeName == pv.Name &&
			(claim.Status.Phase == v1.ClaimBound || claim.Status.Phase == v1.ClaimLost) {
			if err := invariants.FitsRebind(pv, claim); err != nil {
				c.fail(e.RV, ruleLostRebound, "%s (%s) on %s: %v", invariants.ClaimKey(claim), claim.Status.Phase, pv.Name, err)
			}
		}
	}
	// Deletion: nothing that is being deleted starts a bind (the claim could not be used: the
	// scheduler and the kubelet refuse a claim being deleted; the volume would be gone once
	// unbound), and a volume is Released only once its claim is gone, not while the claim
	// lingers with a deletionTimestamp (held by pvc-protection while a pod uses it).
	// Judged against what the binder could know: a bind made from an informer that had not yet
	// delivered the deletion is a stale-cache race no binder can close without a read per bind.
	if u := invariants.RefUID(pv); u != "" && u != invariants.RefUID(old) {
		if claim := c.byUID[u]; claim != nil && claim.DeletionTimestamp != nil && c.binderKnew(resPVC, c.deletedAt[u]) {
			c.fail(e.RV, ruleDeletingClaimBound, "%s (%s) given %s while being deleted", invariants.ClaimKey(claim), u, pv.Name)
		}
		if old.DeletionTimestamp != nil && c.binderKnew(resPV, c.deletedAt[pv.UID]) {
			c.fail(e.RV, ruleDeletingPVBound, "%s given to %s (%s) while being deleted", pv.Name, invariants.RefKey(pv.Spec.ClaimRef), u)
		}
	}
	if old.Status.Phase != v1.VolumeReleased && pv.Status.Phase == v1.VolumeReleased {
		// Released from a claim that still uses it (its spec.volumeName names it); a volume whose
		// claim went to another volume is Released rightly while that claim lives on.
		if claim := c.byUID[invariants.RefUID(pv)]; claim != nil && claim.Spec.VolumeName == pv.Name {
			c.fail(e.RV, ruleReleasedEarly, "%s Released from %s (%s), which exists (deleting: %t)", pv.Name, invariants.ClaimKey(claim), claim.UID, claim.DeletionTimestamp != nil)
		}
	}
	if want, ok := c.userReserved[pv.UID]; ok && pv.Spec.ClaimRef != nil && invariants.RefKey(pv.Spec.ClaimRef) != want {
		c.fail(e.RV, ruleReservedElsewhere, "%s reserved %s, now names %s", pv.Name, want, invariants.RefKey(pv.Spec.ClaimRef))
	}
	if u := invariants.RefUID(old); u != "" && u != invariants.RefUID(pv) {
		if claim := c.byUID[u]; claim != nil && claim.Status.Phase == v1.ClaimBound && claim.Spec.VolumeName == pv.Name {
			c.fail(e.RV, ruleBoundTakenAway, "%s: claimRef %s(%s) -> %s(%s) while %s is Bound to it",
				pv.Name, invariants.RefKey(old.Spec.ClaimRef), u, invariants.RefKey(pv.Spec.ClaimRef), invariants.RefUID(pv), invariants.ClaimKey(claim))
		}
	}
	if u, ok := c.retained[pv.Name]; ok {
		switch {
		case invariants.RefUID(pv) != u:
			c.fail(e.RV, ruleRetainedRebound, "%s was Released from %s (Retain); the binder set its claimRef to %q", pv.Name, u, invariants.RefUID(pv))
		case pv.Status.Phase == v1.VolumeBound || pv.Status.Phase == v1.VolumeAvailable:
			c.fail(e.RV, ruleRetainedRebound, "%s was Released from %s (Retain); now %s", pv.Name, u, pv.Status.Phase)
		}
	} else if old.Status.Phase != v1.VolumeReleased && pv.Status.Phase == v1.VolumeReleased &&
		pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimRetain {
		c.retained[pv.Name] = invariants.RefUID(pv)
	}
	// A Bound volume without claimRef UID is checked once settled: unbinding a volume is two
	// writes (claimRef, then phase), upstream's protocol, and the state between them is this.
}

func (c *checker) observeClaim(e event) {
	claim := e.New.(*v1.PersistentVolumeClaim)
	k := invariants.ClaimKey(claim)
	switch e.Type {
	case watch.Added:
		c.claims[k] = claim
		c.byUID[claim.UID] = claim
		if claim.Spec.VolumeName != "" {
			c.userPrebound[claim.UID] = claim.Spec.VolumeName
		}
		return
	case watch.Deleted:
		delete(c.claims, k)
		delete(c.byUID, claim.UID)
		delete(c.userPrebound, claim.UID)
		return
	}
	old := e.Old.(*v1.PersistentVolumeClaim)
	c.claims[k] = claim
	c.byUID[claim.UID] = claim
	c.noteDeletion(e, old, claim)
	if old.Spec.VolumeName != "" && old.Spec.VolumeName != claim.Spec.VolumeName {
		c.fail(e.RV, ruleVolumeNameChanged, "%s: %q -> %q", k, old.Spec.VolumeName, claim.Spec.VolumeName)
	}
	if want, ok := c.userPrebound[claim.UID]; ok && claim.Spec.VolumeName != want {
		c.fail(e.RV, rulePreboundElsewhere, "%s was created with volumeName %s, now %q", k, want, claim.Spec.VolumeName)
	}
	pv := c.pvs[claim.Spec.VolumeName]
	if old.Status.Phase != v1.ClaimBound && claim.Status.Phase == v1.ClaimBound {
		c.binds++
		if c.bindPairs == nil {
			c.bindPairs = map[string]int{}
		}
		c.bindPairs[k+" -> "+claim.Spec.VolumeName]++
		if pv != nil {
			c.boundTo[claim.UID] = pv.UID
		}
		switch {
		case claim.Spec.VolumeName == "":
			c.fail(e.RV, ruleRefsDisagree, "%s Bound without spec.volumeName", k)
		case pv == nil:
			// The user deleted the PV mid-bind: the claim goes Lost (checked once settled).
		case old.Status.Phase == v1.ClaimLost && invariants.RefUID(pv) == claim.UID:
			// Checked when the binder wrote the volume's claimRef (observeVolume).
		default:
			if v := invariants.CheckBound(claim, pv, c.binding(pv, claim)); v != nil {
				c.fail(e.RV, v.Rule, "%s", v.Detail)
			}
		}
	}
	if old.Status.Phase == v1.ClaimBound && claim.Status.Phase != v1.ClaimBound && pv != nil && invariants.RefUID(pv) == claim.UID {
		c.fail(e.RV, ruleBoundLost, "%s went %s though %s still names it (phase %s)", k, claim.Status.Phase, pv.Name, pv.Status.Phase)
	}
}

// countTransition counts the binder's phase changes ("pv Released", "pvc Bound"): two runs that
// made the same ones did the same work, and only then are their writes compared.
func (c *checker) countTransition(e event) {
	if c.transitions == nil {
		c.transitions = map[string]int{}
	}
	switch o := e.New.(type) {
	case *v1.PersistentVolume:
		old := e.Old.(*v1.PersistentVolume)
		if old.Status.Phase != o.Status.Phase {
			c.transitions["pv "+string(o.Status.Phase)]++
		}
		// An unbind (a claimRef's UID cleared, or the claimRef) is work of its own: upstream's
		// unbindVolume of a volume a user bound to a claim that went to another volume, done by
		// one arm only when the other's slower resync came after the volume's deletion (seed
		// 1796413082435382368: two writes, not compared with the other arm's one).
		if invariants.RefUID(old) != "" && invariants.RefUID(o) == "" {
			c.transitions["pv unbind"]++
		}
	case *v1.PersistentVolumeClaim:
		old := e.Old.(*v1.PersistentVolumeClaim)
		if old.Status.Phase != o.Status.Phase {
			c.transitions["pvc "+string(o.Status.Phase)]++
		}
		// A claim handed to its class's provisioner is work of its own: a claim synced before the
		// volume that reserves it is in the binder's cache (another watch and worker bring it)
		// starts provisioning, one claim update, and is bound to that volume after;
		// whether it does is a race between the watches, in either arm (seed
		// 1796514712451020555: ours annotated the claim, upstream's arm did not).
		if old.Annotations[annStorageProvisioner] == "" && o.Annotations[annStorageProvisioner] != "" {
			c.transitions["pvc to provisioner"]++
		}
	}
}

// checkOneToOne: no two Bound claims on one PV, no claim on two Bound PVs.
func (c *checker) checkOneToOne(rv int64) {
	claims := make([]*v1.PersistentVolumeClaim, 0, len(c.claims))
	for _, claim := range c.claims {
		claims = append(claims, claim)
	}
	pvs := make([]*v1.PersistentVolume, 0, len(c.pvs))
	for _, pv := range c.pvs {
		pvs = append(pvs, pv)
	}
	// Keyed by the volume's UID at each claim's bind: a claim still Bound to a deleted volume
	// (its Lost write not made yet) while another claim binds the volume re-created under that
	// name is not a double bind (the kubelet checks the claimRef's UID); the settled checks find
	// a claim left Bound that way.
	volumeAtBind := func(claim *v1.PersistentVolumeClaim) string {
		return claim.Spec.VolumeName + "/" + string(c.boundTo[claim.UID])
	}
	for _, v := range invariants.CheckTwoClaimsOnePV(claims, volumeAtBind) {
		c.fail(rv, v.Rule, "%s", v.Detail)
	}
	for _, v := range invariants.CheckOneClaimTwoPVs(pvs, c.reservedByUser) {
		c.fail(rv, v.Rule, "%s", v.Detail)
	}
}

// reservedByUser: two volumes that users both made to reserve the same claim. The binder binds
// one; the other may be Bound to the claim for a few seconds (both arms) until the binder sees
// the claim bound elsewhere and unbinds it. Checked once settled instead.
func (c *checker) reservedByUser(a, b *v1.PersistentVolume) bool {
	ka, oka := c.userReserved[a.UID]
	kb, okb := c.userReserved[b.UID]
	return oka && okb && ka == kb
}

func (c *checker) sortedPVs() []string {
	keys := make([]string, 0, len(c.pvs))
	for k := range c.pvs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// binding is how users asked for pv and claim to be bound, from what the checker recorded when
// each was created or a user wrote it.
func (c *checker) binding(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) invariants.Binding {
	_, prebound := c.userPrebound[claim.UID]
	return invariants.Binding{
		Prebound:  prebound,
		Reserved:  c.userReserved[pv.UID] == invariants.ClaimKey(claim),
		UserBound: c.userBound[pv.UID] == claim.UID,
	}
}

// settled checks the end state once the run has been quiet (invariants.Settled): every claim that
// can bind is Bound, and claims and volumes agree. Claims of classLocal are WaitForFirstConsumer;
// a claim of classExt without a selector must have been provisioned.
func (c *checker) settled(pvs []*v1.PersistentVolume, claims []*v1.PersistentVolumeClaim) {
	intent := invariants.Intent{
		WaitForFirstConsumer: func(claim *v1.PersistentVolumeClaim) bool {
			return ptr.Deref(claim.Spec.StorageClassName, "") == classLocal
		},
		ProvisionStuck: func(claim *v1.PersistentVolumeClaim) (string, bool) {
			return "", ptr.Deref(claim.Spec.StorageClassName, "") == classExt && claim.Spec.Selector == nil
		},
	}
	for _, v := range invariants.Settled(pvs, claims, intent) {
		c.fail(0, v.Rule, "%s", v.Detail)
	}
}
