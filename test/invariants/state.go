package invariants

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// ClaimKey is a claim's namespace/name.
func ClaimKey(c *v1.PersistentVolumeClaim) string { return c.Namespace + "/" + c.Name }

// RefKey is the namespace/name a claimRef names, or "".
func RefKey(r *v1.ObjectReference) string {
	if r == nil {
		return ""
	}
	return r.Namespace + "/" + r.Name
}

// RefUID is the UID of the claim a volume's claimRef names, or "".
func RefUID(pv *v1.PersistentVolume) types.UID {
	if pv == nil || pv.Spec.ClaimRef == nil {
		return ""
	}
	return pv.Spec.ClaimRef.UID
}

// CheckTwoClaimsOnePV: never two Bound claims on one volume (two pods would write one disk). volumeOf
// names the volume a Bound claim holds; nil: its spec.volumeName (the model adds the volume's UID
// at the bind, so that a claim still Bound to a deleted volume and one bound to the volume
// re-created under that name are two volumes).
func CheckTwoClaimsOnePV(claims []*v1.PersistentVolumeClaim, volumeOf func(*v1.PersistentVolumeClaim) string) []Violation {
	var out []Violation
	onPV := map[string]string{}
	for _, claim := range sortedClaims(claims) {
		if claim.Status.Phase != v1.ClaimBound || claim.Spec.VolumeName == "" {
			continue
		}
		id := claim.Spec.VolumeName
		if volumeOf != nil {
			id = volumeOf(claim)
		}
		if other, ok := onPV[id]; ok {
			out = append(out, violationf(TwoClaimsOnePV, claim.Spec.VolumeName, "%s and %s both Bound to %s", other, ClaimKey(claim), claim.Spec.VolumeName))
		}
		onPV[id] = ClaimKey(claim)
	}
	return out
}

// CheckOneClaimTwoPVs: never one claim on two Bound volumes, but for the pairs exempt names (nil: none).
func CheckOneClaimTwoPVs(pvs []*v1.PersistentVolume, exempt func(a, b *v1.PersistentVolume) bool) []Violation {
	var out []Violation
	forClaim := map[types.UID]*v1.PersistentVolume{}
	for _, pv := range sortedVolumes(pvs) {
		if pv.Status.Phase != v1.VolumeBound || RefUID(pv) == "" {
			continue
		}
		if other, ok := forClaim[RefUID(pv)]; ok && (exempt == nil || !exempt(other, pv)) {
			out = append(out, violationf(OneClaimTwoPVs, string(RefUID(pv)), "%s and %s both Bound to claim %s (%s)", other.Name, pv.Name, RefKey(pv.Spec.ClaimRef), RefUID(pv)))
		}
		forClaim[RefUID(pv)] = pv
	}
	return out
}

// CheckBound checks a claim Bound to pv: the volume names it (RefsDisagree) and fits it for the
// way the two were bound (NoFit). Nil: both hold.
func CheckBound(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, b Binding) *Violation {
	k := ClaimKey(claim)
	if RefUID(pv) != claim.UID {
		v := violationf(RefsDisagree, k, "%s Bound to %s whose claimRef is %s(%s)", k, pv.Name, RefKey(pv.Spec.ClaimRef), RefUID(pv))
		return &v
	}
	if err := Fits(pv, claim, b); err != nil {
		v := violationf(NoFit, k, "%s on %s: %v", k, pv.Name, err)
		return &v
	}
	return nil
}

// CheckLost: a claim Lost although its volume is there, names it by UID and could serve it
// again (FitsRebind, not being deleted, not Released): a bind lost (BoundLost). Nil otherwise.
func CheckLost(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) *Violation {
	if claim.Status.Phase != v1.ClaimLost || pv == nil || claim.Spec.VolumeName != pv.Name || RefUID(pv) != claim.UID ||
		pv.DeletionTimestamp != nil || pv.Status.Phase == v1.VolumeReleased || FitsRebind(pv, claim) != nil {
		return nil
	}
	v := violationf(BoundLost, ClaimKey(claim), "%s is Lost while %s names it (phase %s)", ClaimKey(claim), pv.Name, pv.Status.Phase)
	return &v
}

// Intent is what Settled needs to know of a harness's classes.
type Intent struct {
	// WaitForFirstConsumer: the claim's class binds when kube-scheduler has placed its pod; the
	// binder does not match it alone.
	WaitForFirstConsumer func(*v1.PersistentVolumeClaim) bool
	// ProvisionStuck, for a Pending claim: whether its class is a provisioning one that should
	// have served it by now, and what is missing. A claim it does not call stuck is then checked
	// like any other (a claim with a selector is not provisioned: it waits for a matching volume).
	ProvisionStuck func(*v1.PersistentVolumeClaim) (why string, stuck bool)
}

// Settled checks the end state once a run has been quiet: every claim that can bind is Bound,
// and claims and volumes agree.
func Settled(pvs []*v1.PersistentVolume, claims []*v1.PersistentVolumeClaim, intent Intent) []Violation {
	var out []Violation
	fail := func(rule Rule, subject, format string, args ...any) {
		out = append(out, violationf(rule, subject, format, args...))
	}
	pvs, claims = sortedVolumes(pvs), sortedClaims(claims)
	pvByName := map[string]*v1.PersistentVolume{}
	claimByKey := map[string]*v1.PersistentVolumeClaim{}
	claimUIDs := map[types.UID]bool{}
	for _, claim := range claims {
		claimByKey[ClaimKey(claim)] = claim
		claimUIDs[claim.UID] = true
	}
	boundFor := map[types.UID]string{}
	for _, pv := range pvs {
		if pv.Status.Phase == v1.VolumeBound {
			if RefUID(pv) != "" && !claimUIDs[RefUID(pv)] {
				fail(SettledOrphan, pv.Name, "%s is Bound to %s (%s)", pv.Name, RefKey(pv.Spec.ClaimRef), RefUID(pv))
			}
			if RefUID(pv) == "" {
				fail(BoundWithoutRef, pv.Name, "%s is Bound with claimRef %v", pv.Name, pv.Spec.ClaimRef)
			} else if other, ok := boundFor[RefUID(pv)]; ok {
				fail(OneClaimTwoPVs, string(RefUID(pv)), "%s and %s both Bound to claim %s (%s)", other, pv.Name, RefKey(pv.Spec.ClaimRef), RefUID(pv))
			}
			boundFor[RefUID(pv)] = pv.Name
		}
	}
	for _, pv := range pvs {
		pvByName[pv.Name] = pv
		// Pending is right only while the PV names a claim that exists and has not bound it (it
		// waits for that claim's sync); otherwise it is Available, Released or Bound by now.
		if pv.Status.Phase == v1.VolumePending {
			claim := claimByKey[RefKey(pv.Spec.ClaimRef)]
			if claim == nil || RefUID(pv) != "" && RefUID(pv) != claim.UID || claim.Status.Phase == v1.ClaimBound {
				fail(SettledPVPending, pv.Name, "%s", DescribePV(pv))
			}
		}
	}
	usable := func(pv *v1.PersistentVolume) bool {
		return pv.DeletionTimestamp == nil && (pv.Status.Phase == v1.VolumeAvailable || pv.Status.Phase == v1.VolumePending)
	}
	for _, claim := range claims {
		k := ClaimKey(claim)
		if claim.Status.Phase == v1.ClaimBound {
			pv := pvByName[claim.Spec.VolumeName]
			switch {
			case pv == nil:
				fail(SettledLostMissing, k, "%s Bound to %s, which does not exist", k, claim.Spec.VolumeName)
			case RefUID(pv) != claim.UID || pv.Status.Phase != v1.VolumeBound:
				fail(SettledHalfBound, k, "%s Bound to %s, which names %s(%s) and is %s", k, pv.Name, RefKey(pv.Spec.ClaimRef), RefUID(pv), pv.Status.Phase)
			}
			continue
		}
		if claim.Status.Phase != v1.ClaimPending || claim.DeletionTimestamp != nil {
			continue // a claim being deleted (a pod still uses it) is not to be bound
		}
		if x := claim.Spec.VolumeName; x != "" {
			pv := pvByName[x]
			if pv != nil && usable(pv) && (pv.Spec.ClaimRef == nil || RefKey(pv.Spec.ClaimRef) == k && (RefUID(pv) == "" || RefUID(pv) == claim.UID)) &&
				FitsAlways(pv, claim) == nil {
				fail(SettledPrebound, k, "%s Pending; %s", k, DescribePV(pv))
			}
			continue
		}
		for _, pv := range pvs {
			if RefKey(pv.Spec.ClaimRef) == k && (RefUID(pv) == "" || RefUID(pv) == claim.UID) && usable(pv) && FitsReserved(pv, claim) == nil {
				fail(SettledReserved, k, "%s Pending; %s", k, DescribePV(pv))
				break
			}
		}
		if intent.WaitForFirstConsumer != nil && intent.WaitForFirstConsumer(claim) {
			continue
		}
		if intent.ProvisionStuck != nil {
			if why, stuck := intent.ProvisionStuck(claim); stuck {
				fail(SettledProvision, k, "%s Pending%s", k, why)
				continue
			}
		}
		for _, pv := range pvs {
			if pv.Spec.ClaimRef == nil && usable(pv) && pv.Status.Phase == v1.VolumeAvailable && FitsMatched(pv, claim) == nil {
				fail(SettledFreeFits, k, "%s Pending; %s", k, DescribePV(pv))
				break
			}
		}
	}
	return out
}

// DescribePV is a volume in one line: name, class, capacity, access and volume modes, reclaim
// policy, labels, claimRef and node.
func DescribePV(pv *v1.PersistentVolume) string {
	s := fmt.Sprintf("%s class=%q cap=%s modes=%v mode=%s policy=%s labels=%v", pv.Name, pv.Spec.StorageClassName,
		pv.Spec.Capacity.Storage(), pv.Spec.AccessModes, ptr.Deref(pv.Spec.VolumeMode, ""), pv.Spec.PersistentVolumeReclaimPolicy, pv.Labels)
	if pv.Spec.ClaimRef != nil {
		s += fmt.Sprintf(" claimRef=%s/%s", pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name)
		if pv.Spec.ClaimRef.UID != "" {
			s += "(" + string(pv.Spec.ClaimRef.UID) + ")"
		}
	}
	if n := AffinityNode(pv); n != "" {
		s += " node=" + n
	}
	return s
}

func sortedClaims(claims []*v1.PersistentVolumeClaim) []*v1.PersistentVolumeClaim {
	out := slices.Clone(claims)
	slices.SortFunc(out, func(a, b *v1.PersistentVolumeClaim) int { return strings.Compare(ClaimKey(a), ClaimKey(b)) })
	return out
}

func sortedVolumes(pvs []*v1.PersistentVolume) []*v1.PersistentVolume {
	out := slices.Clone(pvs)
	slices.SortFunc(out, func(a, b *v1.PersistentVolume) int { return strings.Compare(a.Name, b.Name) })
	return out
}
