package torture

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/fastpv/pv-controller-manager/test/invariants"
)

// ruleWorseChoice: where upstream's rules give one answer, a matched claim gets that volume.
const ruleWorseChoice = invariants.ChoiceWorse

// checkChoice judges a matched bind (the binder writing claim's UID into the claimRef of a
// volume that named no claim, for a claim without spec.volumeName) against upstream's own rules,
// FindMatchingVolume's: among the free Available volumes that fit the claim (class, size,
// volume mode, access modes, selector: invariants.FitsMatched), the access-mode groups are tried from the fewest modes
// up, and the first group with a fit gives its smallest volume. That choice is unique when one
// group of the fewest modes has fits and one volume in it is the smallest; it is judged only
// when no other Pending claim fits that volume (a competitor may rightly take it first) and the
// binder's informers had delivered every volume involved at an earlier instant. A volume not
// Available yet (a new volume ours offers from Pending, patch 0018) is no worse when upstream's
// order (fewer access modes, then smaller) puts it no later than upstream's choice.
func (c *checker) checkChoice(rv int64, chosenBefore *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) {
	if claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil || ptr.Deref(claim.Spec.StorageClassName, "") == classLocal ||
		claim.Status.Phase != v1.ClaimPending {
		return
	}
	if _, ok := c.userReserved[chosenBefore.UID]; ok {
		return
	}
	for _, pv := range c.pvs { // a volume reserving the claim is upstream's choice whatever its size
		if invariants.RefKey(pv.Spec.ClaimRef) == invariants.ClaimKey(claim) && pv.Name != chosenBefore.Name {
			return
		}
	}
	var fits []*v1.PersistentVolume
	for _, name := range c.sortedPVs() {
		pv := c.pvs[name]
		if name == chosenBefore.Name {
			pv = chosenBefore
		}
		if pv.Spec.ClaimRef != nil || pv.DeletionTimestamp != nil || pv.Status.Phase != v1.VolumeAvailable || invariants.FitsMatched(pv, claim) != nil {
			continue
		}
		if !c.binderKnew(resPV, rvOf(pv)) {
			return // the binder's cache may not show this volume as it is: not judged
		}
		fits = append(fits, pv)
	}
	best, unique := upstreamChoice(fits)
	if best == nil || !unique || best.Name == chosenBefore.Name {
		return
	}
	if c.competitor(best, claim) {
		return // it may rightly take that volume first
	}
	if chosenBefore.Status.Phase != v1.VolumeAvailable && upstreamOrder(chosenBefore, best) <= 0 {
		return
	}
	c.fail(rv, ruleWorseChoice, "%s (%s, %v) given %s (%s, %v, %s); upstream's rules give %s (%s, %v)", invariants.ClaimKey(claim),
		claim.Spec.Resources.Requests.Storage(), claim.Spec.AccessModes, chosenBefore.Name, chosenBefore.Spec.Capacity.Storage(),
		chosenBefore.Spec.AccessModes, chosenBefore.Status.Phase, best.Name, best.Spec.Capacity.Storage(), best.Spec.AccessModes)
}

// rankedBefore says whether upstream's rules put a before b for any claim both fit: in an access-mode
// group of fewer modes, or smaller in the same group. Two groups of as many modes have no order
// (cache order breaks the tie, as upstreamChoice says), so neither is before the other.
func rankedBefore(a, b *v1.PersistentVolume) bool {
	ga, gb := modeGroup(a), modeGroup(b)
	if len(ga) == len(gb) && !slices.Equal(ga, gb) {
		return false
	}
	return upstreamOrder(a, b) < 0
}

// upstreamOrder compares two volumes as FindMatchingVolume ranks them for one claim: the group of
// fewer access modes first, then the smaller.
func upstreamOrder(a, b *v1.PersistentVolume) int {
	if c := cmp.Compare(len(modeGroup(a)), len(modeGroup(b))); c != 0 {
		return c
	}
	return a.Spec.Capacity.Storage().Cmp(*b.Spec.Capacity.Storage())
}

// modeGroup is a volume's set of access modes, sorted.
func modeGroup(pv *v1.PersistentVolume) []string {
	m := make([]string, 0, len(pv.Spec.AccessModes))
	for _, a := range pv.Spec.AccessModes {
		m = append(m, string(a))
	}
	slices.Sort(m)
	return slices.Compact(m)
}

// upstreamChoice returns FindMatchingVolume's pick among fitting free volumes and whether the
// rules make it unique (ties between groups of as many modes, or between volumes of one size,
// are broken by cache order).
func upstreamChoice(fits []*v1.PersistentVolume) (*v1.PersistentVolume, bool) {
	if len(fits) == 0 {
		return nil, false
	}
	groupOf := func(pv *v1.PersistentVolume) string { return strings.Join(modeGroup(pv), ",") }
	fewest := -1
	groups := map[string]bool{}
	for _, pv := range fits {
		n := len(modeGroup(pv))
		switch {
		case fewest == -1 || n < fewest:
			fewest, groups = n, map[string]bool{groupOf(pv): true}
		case n == fewest:
			groups[groupOf(pv)] = true
		}
	}
	if len(groups) != 1 {
		return nil, false
	}
	var best *v1.PersistentVolume
	unique := false
	for _, pv := range fits {
		if !groups[groupOf(pv)] {
			continue
		}
		switch {
		case best == nil || pv.Spec.Capacity.Storage().Cmp(*best.Spec.Capacity.Storage()) < 0:
			best, unique = pv, true
		case pv.Spec.Capacity.Storage().Cmp(*best.Spec.Capacity.Storage()) == 0:
			unique = false
		}
	}
	return best, unique
}

func rvOf(obj metav1.Object) int64 {
	var rv int64
	_, _ = fmt.Sscan(obj.GetResourceVersion(), &rv)
	return rv
}

// excess is the capacity Bound volumes give beyond their claims' requests, and the claims left
// Pending (not being deleted), at the end of a run.
func excess(pvs []*v1.PersistentVolume, claims []*v1.PersistentVolumeClaim) (extra resource.Quantity, pending int) {
	byName := map[string]*v1.PersistentVolume{}
	for _, pv := range pvs {
		byName[pv.Name] = pv
	}
	for _, claim := range claims {
		switch {
		case claim.Status.Phase == v1.ClaimBound:
			if pv := byName[claim.Spec.VolumeName]; pv != nil {
				d := pv.Spec.Capacity.Storage().DeepCopy()
				d.Sub(*claim.Spec.Resources.Requests.Storage())
				if d.Sign() > 0 {
					extra.Add(d)
				}
			}
		case claim.Status.Phase == v1.ClaimPending && claim.DeletionTimestamp == nil:
			pending++
		}
	}
	return extra, pending
}

// ruleLargerWhileBetterComing: ours does not give a matched claim a volume while a better one is
// about to turn Available (patch 0017). Upstream's binder makes no such promise (its claim sees
// only Available volumes), so only ours' arm is held to it.
const ruleLargerWhileBetterComing = invariants.ChoiceLargerWhileBetterComing

// checkBetterComing judges ours' matched bind of chosenBefore to claim against the volumes not
// Available yet: a free volume (no claimRef, not being deleted, phase "" or Pending) that fits the
// claim and that upstream's order puts before the chosen one (fewer access modes, or as many and
// smaller) holds the match back until it turns Available, unless another Pending claim could
// take it (a competitor, or a claim ours offered it to) or the chosen volume has exactly the
// requested size. Judged only where the binder's informer had delivered that volume earlier.
func (c *checker) checkBetterComing(rv int64, chosenBefore *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) {
	if !c.strictChoice || !matchedBind(chosenBefore, claim) || c.userReserved[chosenBefore.UID] != "" {
		return
	}
	if chosenBefore.Spec.Capacity.Storage().Cmp(*claim.Spec.Resources.Requests.Storage()) == 0 {
		return
	}
	for _, pv := range c.pvs {
		if invariants.RefKey(pv.Spec.ClaimRef) == invariants.ClaimKey(claim) && pv.Name != chosenBefore.Name {
			return // a volume reserving the claim is its choice, whatever its size
		}
	}
	for _, name := range c.sortedPVs() {
		pv := c.pvs[name]
		if name == chosenBefore.Name || pv.Spec.ClaimRef != nil || pv.DeletionTimestamp != nil ||
			pv.Status.Phase != "" && pv.Status.Phase != v1.VolumePending ||
			invariants.FitsMatched(pv, claim) != nil || !rankedBefore(pv, chosenBefore) || !c.binderKnew(resPV, rvOf(pv)) ||
			c.competitor(pv, claim) {
			continue
		}
		c.fail(rv, ruleLargerWhileBetterComing, "%s (%s, %v) given %s (%s, %v) while %s (%s, %v, %s) was about to turn Available",
			invariants.ClaimKey(claim), claim.Spec.Resources.Requests.Storage(), claim.Spec.AccessModes, chosenBefore.Name,
			chosenBefore.Spec.Capacity.Storage(), chosenBefore.Spec.AccessModes, pv.Name, pv.Spec.Capacity.Storage(),
			pv.Spec.AccessModes, pv.Status.Phase)
		return
	}
}

// matchedBind: the binder gives a volume that named no claim to a Pending claim that names no
// volume and is not being deleted (a match; a WaitForFirstConsumer claim's volume is
// kube-scheduler's choice).
func matchedBind(chosenBefore *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) bool {
	return chosenBefore.Spec.ClaimRef == nil && claim.Spec.VolumeName == "" && claim.DeletionTimestamp == nil &&
		ptr.Deref(claim.Spec.StorageClassName, "") != classLocal && claim.Status.Phase == v1.ClaimPending
}

// competitor says whether a Pending claim other than claim could rightly take pv: one it fits
// (not being deleted, naming no volume) or one that names it.
func (c *checker) competitor(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) bool {
	for _, other := range c.claims {
		if other.UID == claim.UID || other.Status.Phase != v1.ClaimPending || other.DeletionTimestamp != nil {
			continue
		}
		if other.Spec.VolumeName == pv.Name || other.Spec.VolumeName == "" && invariants.FitsMatched(pv, other) == nil {
			return true
		}
	}
	return false
}

// noteWorseFit records, at a matched bind of chosenBefore to claim, the free volumes known to the
// binder that fit the claim and that upstream's order puts before the chosen one: the claim could
// have had one of them. worseFits reads them at the end.
func (c *checker) noteWorseFit(chosenBefore *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) {
	if !matchedBind(chosenBefore, claim) || c.userReserved[chosenBefore.UID] != "" {
		return
	}
	var better []types.UID
	for _, name := range c.sortedPVs() {
		pv := c.pvs[name]
		if name == chosenBefore.Name || pv.Spec.ClaimRef != nil || pv.DeletionTimestamp != nil ||
			pv.Status.Phase != "" && pv.Status.Phase != v1.VolumePending && pv.Status.Phase != v1.VolumeAvailable ||
			invariants.FitsMatched(pv, claim) != nil || !rankedBefore(pv, chosenBefore) || !c.binderKnew(resPV, rvOf(pv)) {
			continue
		}
		better = append(better, pv.UID)
	}
	if len(better) > 0 {
		c.matchedBinds = append(c.matchedBinds, matchedBindRecord{claim: claim.UID, volume: chosenBefore.UID, better: better})
	}
}

// matchedBindRecord: a matched bind of volume to claim while the better volumes were free.
type matchedBindRecord struct {
	claim, volume types.UID
	better        []types.UID
}

// worseFits finds, in the settled state, the claims ours gave away a volume they needed for
// nothing: a Pending claim (naming no volume, not being deleted) that a Bound volume fits more
// tightly than the claim it is Bound to (the Pending claim asks for more), where that claim was
// matched to it while a volume it fits better was free, and that volume is free still (bug 17:
// the 4Gi claim given the 5Gi volume while its own 4Gi volume was free, the 5Gi claim left
// Pending, the 4Gi volume Available at the end). A better volume that is free at the end was not
// needed by another claim, whatever the order of the syncs. Keyed by namespace/name.
func (c *checker) worseFits(pvs []*v1.PersistentVolume, claims []*v1.PersistentVolumeClaim) map[string]string {
	pvByUID, claimByUID := map[types.UID]*v1.PersistentVolume{}, map[types.UID]*v1.PersistentVolumeClaim{}
	for _, pv := range pvs {
		pvByUID[pv.UID] = pv
	}
	for _, claim := range claims {
		claimByUID[claim.UID] = claim
	}
	out := map[string]string{}
	for _, b := range c.matchedBinds {
		pv, taker := pvByUID[b.volume], claimByUID[b.claim]
		if pv == nil || taker == nil || invariants.RefUID(pv) != taker.UID || taker.Spec.VolumeName != pv.Name || taker.Status.Phase != v1.ClaimBound {
			continue
		}
		var free *v1.PersistentVolume
		for _, u := range b.better {
			if f := pvByUID[u]; f != nil && f.Spec.ClaimRef == nil && f.DeletionTimestamp == nil && f.Status.Phase == v1.VolumeAvailable {
				free = f
				break
			}
		}
		if free == nil {
			continue
		}
		for _, claim := range claims {
			if claim.Status.Phase != v1.ClaimPending || claim.DeletionTimestamp != nil || claim.Spec.VolumeName != "" ||
				invariants.FitsMatched(pv, claim) != nil || claim.Spec.Resources.Requests.Storage().Cmp(*taker.Spec.Resources.Requests.Storage()) <= 0 {
				continue
			}
			if _, ok := out[invariants.ClaimKey(claim)]; !ok {
				out[invariants.ClaimKey(claim)] = fmt.Sprintf("%s (%s) went to %s (%s), which %s (%s, still free) fits better", pv.Name,
					pv.Spec.Capacity.Storage(), invariants.ClaimKey(taker), taker.Spec.Resources.Requests.Storage(), free.Name, free.Spec.Capacity.Storage())
			}
		}
	}
	return out
}
