package torture

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// violation is an invariant broken at a commit (RV) or at the end (RV 0).
type violation struct {
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
	RV     int64  `json:"rv"`
	At     string `json:"at"` // virtual time since the start
}

func (v violation) String() string {
	return fmt.Sprintf("%s at rv %d (+%s): %s", v.Rule, v.RV, v.At, v.Detail)
}

// The rules. Safety rules are checked at every commit; the settled ones once the run is quiet.
const (
	ruleTwoClaimsOnePV     = "one-to-one: two claims Bound to one PV"
	ruleOneClaimTwoPVs     = "one-to-one: one claim on two Bound PVs"
	ruleRefsDisagree       = "one-to-one: a Bound claim's PV does not name it"
	ruleBoundWithoutRef    = "a Bound PV without a claimRef UID"
	ruleNoFit              = "a Bound claim's PV does not fit it"
	ruleLostRebound        = "a claim bound again to a re-created PV that does not fit it"
	rulePreboundElsewhere  = "a claim pre-bound to X bound elsewhere"
	ruleReservedElsewhere  = "a PV reserving claim C bound to another claim"
	ruleRetainedRebound    = "a Released volume with Retain bound again"
	ruleBoundLost          = "a Bound claim lost a volume that still names it"
	ruleBoundTakenAway     = "a Bound volume's claimRef changed while its claim is Bound to it"
	ruleVolumeNameChanged  = "a claim's spec.volumeName changed"
	ruleDeletingClaimBound = "a claim being deleted newly bound"
	ruleDeletingPVBound    = "a volume being deleted newly bound"
	ruleReleasedEarly      = "a volume Released while its claim exists"
	ruleHotLoop            = "a hot loop: one object written again and again against the same version, without back-off"
	ruleSettledFreeFits    = "liveness: a Pending claim that a free PV fits"
	ruleSettledPrebound    = "liveness: a pre-bound claim Pending though its PV is free and fits"
	ruleSettledReserved    = "liveness: a claim Pending though a free PV reserving it fits"
	ruleSettledProvision   = "liveness: a claim of a provisioning class never bound"
	ruleSettledHalfBound   = "settled: claim and volume disagree"
	ruleSettledPVPending   = "settled: a volume still Pending"
	ruleSettledLostMissing = "settled: a claim Bound to a missing PV"
	ruleSettledOrphan      = "settled: a volume Bound to a claim that does not exist"
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
func (c *checker) fail(rv int64, rule, format string, args ...any) {
	detail := fmt.Sprintf(format, args...)
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if c.seen[rule+detail] {
		return
	}
	c.seen[rule+detail] = true
	c.violations = append(c.violations, violation{Rule: rule, Detail: detail, RV: rv, At: time.Since(c.start).String()})
}

func claimKey(c *v1.PersistentVolumeClaim) string { return c.Namespace + "/" + c.Name }

func refKey(r *v1.ObjectReference) string {
	if r == nil {
		return ""
	}
	return r.Namespace + "/" + r.Name
}

func refUID(pv *v1.PersistentVolume) types.UID {
	if pv == nil || pv.Spec.ClaimRef == nil {
		return ""
	}
	return pv.Spec.ClaimRef.UID
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
			c.userReserved[pv.UID] = refKey(pv.Spec.ClaimRef)
			if claim := c.byUID[refUID(pv)]; claim != nil && claim.Spec.VolumeName == pv.Name {
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
		if refKey(old.Spec.ClaimRef) != refKey(pv.Spec.ClaimRef) {
			delete(c.retained, pv.Name)
			if pv.Spec.ClaimRef != nil {
				c.userReserved[pv.UID] = refKey(pv.Spec.ClaimRef)
			} else {
				delete(c.userReserved, pv.UID)
			}
		}
		return
	}
	if refUID(old) == "" && refUID(pv) != "" {
		if claim := c.byUID[refUID(pv)]; claim != nil {
			c.checkChoice(e.RV, old, claim)
			c.checkBetterComing(e.RV, old, claim)
			c.noteWorseFit(old, claim)
		}
		// The binder gave a volume that named no claim to a claim already Bound to (or Lost
		// from) a volume of that name: a re-created volume, or a cache behind the API.
		if claim := c.byUID[refUID(pv)]; claim != nil && claim.Spec.VolumeName == pv.Name &&
			(claim.Status.Phase == v1.ClaimBound || claim.Status.Phase == v1.ClaimLost) {
			if err := fitsRebind(pv, claim); err != nil {
				c.fail(e.RV, ruleLostRebound, "%s (%s) on %s: %v", claimKey(claim), claim.Status.Phase, pv.Name, err)
			}
		}
	}
	// Deletion: nothing that is being deleted starts a bind (the claim could not be used: the
	// scheduler and the kubelet refuse a claim being deleted; the volume would be gone once
	// unbound), and a volume is Released only once its claim is gone, not while the claim
	// lingers with a deletionTimestamp (held by pvc-protection while a pod uses it).
	// Judged against what the binder could know: a bind made from an informer that had not yet
	// delivered the deletion is a stale-cache race no binder can close without a read per bind.
	if u := refUID(pv); u != "" && u != refUID(old) {
		if claim := c.byUID[u]; claim != nil && claim.DeletionTimestamp != nil && c.binderKnew(resPVC, c.deletedAt[u]) {
			c.fail(e.RV, ruleDeletingClaimBound, "%s (%s) given %s while being deleted", claimKey(claim), u, pv.Name)
		}
		if old.DeletionTimestamp != nil && c.binderKnew(resPV, c.deletedAt[pv.UID]) {
			c.fail(e.RV, ruleDeletingPVBound, "%s given to %s (%s) while being deleted", pv.Name, refKey(pv.Spec.ClaimRef), u)
		}
	}
	if old.Status.Phase != v1.VolumeReleased && pv.Status.Phase == v1.VolumeReleased {
		// Released from a claim that still uses it (its spec.volumeName names it); a volume whose
		// claim went to another volume is Released rightly while that claim lives on.
		if claim := c.byUID[refUID(pv)]; claim != nil && claim.Spec.VolumeName == pv.Name {
			c.fail(e.RV, ruleReleasedEarly, "%s Released from %s (%s), which exists (deleting: %t)", pv.Name, claimKey(claim), claim.UID, claim.DeletionTimestamp != nil)
		}
	}
	if want, ok := c.userReserved[pv.UID]; ok && pv.Spec.ClaimRef != nil && refKey(pv.Spec.ClaimRef) != want {
		c.fail(e.RV, ruleReservedElsewhere, "%s reserved %s, now names %s", pv.Name, want, refKey(pv.Spec.ClaimRef))
	}
	if u := refUID(old); u != "" && u != refUID(pv) {
		if claim := c.byUID[u]; claim != nil && claim.Status.Phase == v1.ClaimBound && claim.Spec.VolumeName == pv.Name {
			c.fail(e.RV, ruleBoundTakenAway, "%s: claimRef %s(%s) -> %s(%s) while %s is Bound to it",
				pv.Name, refKey(old.Spec.ClaimRef), u, refKey(pv.Spec.ClaimRef), refUID(pv), claimKey(claim))
		}
	}
	if u, ok := c.retained[pv.Name]; ok {
		switch {
		case refUID(pv) != u:
			c.fail(e.RV, ruleRetainedRebound, "%s was Released from %s (Retain); the binder set its claimRef to %q", pv.Name, u, refUID(pv))
		case pv.Status.Phase == v1.VolumeBound || pv.Status.Phase == v1.VolumeAvailable:
			c.fail(e.RV, ruleRetainedRebound, "%s was Released from %s (Retain); now %s", pv.Name, u, pv.Status.Phase)
		}
	} else if old.Status.Phase != v1.VolumeReleased && pv.Status.Phase == v1.VolumeReleased &&
		pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimRetain {
		c.retained[pv.Name] = refUID(pv)
	}
	// A Bound volume without claimRef UID is checked once settled: unbinding a volume is two
	// writes (claimRef, then phase), upstream's protocol, and the state between them is this.
}

func (c *checker) observeClaim(e event) {
	claim := e.New.(*v1.PersistentVolumeClaim)
	k := claimKey(claim)
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
		case refUID(pv) != claim.UID:
			c.fail(e.RV, ruleRefsDisagree, "%s Bound to %s whose claimRef is %s(%s)", k, pv.Name, refKey(pv.Spec.ClaimRef), refUID(pv))
		case old.Status.Phase == v1.ClaimLost:
			// Checked when the binder wrote the volume's claimRef (observeVolume).
		default:
			if err := c.fits(pv, claim); err != nil {
				c.fail(e.RV, ruleNoFit, "%s on %s: %v", k, pv.Name, err)
			}
		}
	}
	if old.Status.Phase == v1.ClaimBound && claim.Status.Phase != v1.ClaimBound && pv != nil && refUID(pv) == claim.UID {
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
		if refUID(old) != "" && refUID(o) == "" {
			c.transitions["pv unbind"]++
		}
	case *v1.PersistentVolumeClaim:
		if old := e.Old.(*v1.PersistentVolumeClaim); old.Status.Phase != o.Status.Phase {
			c.transitions["pvc "+string(o.Status.Phase)]++
		}
	}
}

// checkOneToOne: no two Bound claims on one PV, no claim on two Bound PVs.
func (c *checker) checkOneToOne(rv int64) {
	// Keyed by the volume's UID at each claim's bind: a claim still Bound to a deleted volume
	// (its Lost write not made yet) while another claim binds the volume re-created under that
	// name is not a double bind (the kubelet checks the claimRef's UID); the settled checks find
	// a claim left Bound that way.
	onPV := map[string]string{}
	for _, k := range c.sortedClaims() {
		claim := c.claims[k]
		if claim.Status.Phase != v1.ClaimBound || claim.Spec.VolumeName == "" {
			continue
		}
		id := claim.Spec.VolumeName + "/" + string(c.boundTo[claim.UID])
		if other, ok := onPV[id]; ok {
			c.fail(rv, ruleTwoClaimsOnePV, "%s and %s both Bound to %s", other, k, claim.Spec.VolumeName)
		}
		onPV[id] = k
	}
	forClaim := map[types.UID]string{}
	for _, name := range c.sortedPVs() {
		pv := c.pvs[name]
		if pv.Status.Phase != v1.VolumeBound || refUID(pv) == "" {
			continue
		}
		if other, ok := forClaim[refUID(pv)]; ok && !c.reservedByUser(c.pvs[other], pv) {
			c.fail(rv, ruleOneClaimTwoPVs, "%s and %s both Bound to claim %s (%s)", other, name, refKey(pv.Spec.ClaimRef), refUID(pv))
		}
		forClaim[refUID(pv)] = name
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

func (c *checker) sortedClaims() []string {
	keys := make([]string, 0, len(c.claims))
	for k := range c.claims {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (c *checker) sortedPVs() []string {
	keys := make([]string, 0, len(c.pvs))
	for k := range c.pvs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fits says whether pv may serve claim, by this file's own code and the documented contract of
// each way to bind (docs/maintainers/torture.md): a claim pre-bound by spec.volumeName gets a PV of its class,
// size, volume mode and access modes ("Reserving a PersistentVolume": the control plane still
// checks them); a PV reserving its claim by claimRef is checked for size, volume mode and access
// modes, not the class (upstream returns a volume bound to the claim before it compares classes);
// when both name each other nothing is checked (the user bound them); a claim the binder matched
// also gets its selector; node affinity when kube-scheduler selected a node.
func (c *checker) fits(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	_, prebound := c.userPrebound[claim.UID]
	reserved := c.userReserved[pv.UID] == claimKey(claim)
	if prebound && reserved || c.userBound[pv.UID] == claim.UID {
		// Both objects name each other: the user bound them, the binder only completes it
		// (upstream syncUnboundClaim: "volume already bound to this claim; finish the binding";
		// syncBoundClaim: "claim is already correctly bound" for a volume created with the UID of
		// a claim that names it: seed 1796398784801077566).
		return nil
	}
	if err := fitsReserved(pv, claim); err != nil {
		return err
	}
	if err := fitsClass(pv, claim); err != nil && (prebound || !reserved) {
		return err
	}
	if !prebound && !reserved && claim.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(claim.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pv.Labels)) {
			return fmt.Errorf("labels %v do not match the selector %v", pv.Labels, claim.Spec.Selector.MatchLabels)
		}
	}
	if node := claim.Annotations[annSelectedNode]; node != "" && affinityNode(pv) != "" && affinityNode(pv) != node {
		if reserved {
			return fmt.Errorf("the volume is on %s, the claim's pod on %s (the volume reserves the claim by claimRef)", affinityNode(pv), node)
		}
		return fmt.Errorf("the volume is on %s, the claim's pod on %s", affinityNode(pv), node)
	}
	return nil
}

// fitsAlways: size, class, volume mode, access modes.
func fitsAlways(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	if err := fitsClass(pv, claim); err != nil {
		return err
	}
	return fitsReserved(pv, claim)
}

func fitsClass(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	if pv.Spec.StorageClassName != ptr.Deref(claim.Spec.StorageClassName, "") {
		return fmt.Errorf("class %q, claim wants %q", pv.Spec.StorageClassName, ptr.Deref(claim.Spec.StorageClassName, ""))
	}
	return nil
}

// fitsReserved is what a PV reserving its claim by claimRef must meet: upstream's contract
// (FindMatchingVolume returns a volume bound to the claim before it compares classes) checks size,
// volume mode and (through the access-mode index) access modes, not the class.
func fitsReserved(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	if pv.Spec.Capacity.Storage().Cmp(*claim.Spec.Resources.Requests.Storage()) < 0 {
		return fmt.Errorf("capacity %s < request %s", pv.Spec.Capacity.Storage(), claim.Spec.Resources.Requests.Storage())
	}
	if ptr.Deref(pv.Spec.VolumeMode, v1.PersistentVolumeFilesystem) != ptr.Deref(claim.Spec.VolumeMode, v1.PersistentVolumeFilesystem) {
		return fmt.Errorf("volume mode %s, claim wants %s", ptr.Deref(pv.Spec.VolumeMode, ""), ptr.Deref(claim.Spec.VolumeMode, ""))
	}
	for _, m := range claim.Spec.AccessModes {
		if !slices.Contains(pv.Spec.AccessModes, m) {
			return fmt.Errorf("access modes %v, claim wants %v", pv.Spec.AccessModes, claim.Spec.AccessModes)
		}
	}
	return nil
}

func affinityNode(pv *v1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, t := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range t.MatchExpressions {
			if e.Key == "kubernetes.io/hostname" && len(e.Values) > 0 {
				return e.Values[0]
			}
		}
	}
	return ""
}

// settled checks the end state once the run has been quiet: every claim that can bind is Bound,
// and claims and volumes agree.
func (c *checker) settled(pvs []*v1.PersistentVolume, claims []*v1.PersistentVolumeClaim) {
	pvByName := map[string]*v1.PersistentVolume{}
	claimByKey := map[string]*v1.PersistentVolumeClaim{}
	for _, claim := range claims {
		claimByKey[claimKey(claim)] = claim
	}
	boundFor := map[types.UID]string{}
	claimUIDs := map[types.UID]bool{}
	for _, claim := range claims {
		claimUIDs[claim.UID] = true
	}
	for _, pv := range pvs {
		if pv.Status.Phase == v1.VolumeBound {
			if refUID(pv) != "" && !claimUIDs[refUID(pv)] {
				c.fail(0, ruleSettledOrphan, "%s is Bound to %s (%s)", pv.Name, refKey(pv.Spec.ClaimRef), refUID(pv))
			}
			if refUID(pv) == "" {
				c.fail(0, ruleBoundWithoutRef, "%s is Bound with claimRef %v", pv.Name, pv.Spec.ClaimRef)
			} else if other, ok := boundFor[refUID(pv)]; ok {
				c.fail(0, ruleOneClaimTwoPVs, "%s and %s both Bound to claim %s (%s)", other, pv.Name, refKey(pv.Spec.ClaimRef), refUID(pv))
			}
			boundFor[refUID(pv)] = pv.Name
		}
	}
	for _, pv := range pvs {
		pvByName[pv.Name] = pv
		// Pending is right only while the PV names a claim that exists and has not bound it (it
		// waits for that claim's sync); otherwise it is Available, Released or Bound by now.
		if pv.Status.Phase == v1.VolumePending {
			claim := claimByKey[refKey(pv.Spec.ClaimRef)]
			if claim == nil || refUID(pv) != "" && refUID(pv) != claim.UID || claim.Status.Phase == v1.ClaimBound {
				c.fail(0, ruleSettledPVPending, "%s", describePV(pv))
			}
		}
	}
	wffc := func(claim *v1.PersistentVolumeClaim) bool {
		return ptr.Deref(claim.Spec.StorageClassName, "") == classLocal
	}
	usable := func(pv *v1.PersistentVolume) bool {
		return pv.DeletionTimestamp == nil && (pv.Status.Phase == v1.VolumeAvailable || pv.Status.Phase == v1.VolumePending)
	}
	for _, claim := range claims {
		k := claimKey(claim)
		if claim.Status.Phase == v1.ClaimBound {
			pv := pvByName[claim.Spec.VolumeName]
			switch {
			case pv == nil:
				c.fail(0, ruleSettledLostMissing, "%s Bound to %s, which does not exist", k, claim.Spec.VolumeName)
			case refUID(pv) != claim.UID || pv.Status.Phase != v1.VolumeBound:
				c.fail(0, ruleSettledHalfBound, "%s Bound to %s, which names %s(%s) and is %s", k, pv.Name, refKey(pv.Spec.ClaimRef), refUID(pv), pv.Status.Phase)
			}
			continue
		}
		if claim.Status.Phase != v1.ClaimPending || claim.DeletionTimestamp != nil {
			continue // a claim being deleted (a pod still uses it) is not to be bound
		}
		if x := claim.Spec.VolumeName; x != "" {
			pv := pvByName[x]
			if pv != nil && usable(pv) && (pv.Spec.ClaimRef == nil || refKey(pv.Spec.ClaimRef) == k && (refUID(pv) == "" || refUID(pv) == claim.UID)) &&
				fitsAlways(pv, claim) == nil {
				c.fail(0, ruleSettledPrebound, "%s Pending; %s", k, describePV(pv))
			}
			continue
		}
		for _, pv := range pvs {
			if refKey(pv.Spec.ClaimRef) == k && (refUID(pv) == "" || refUID(pv) == claim.UID) && usable(pv) && fitsReserved(pv, claim) == nil {
				c.fail(0, ruleSettledReserved, "%s Pending; %s", k, describePV(pv))
				break
			}
		}
		if wffc(claim) {
			continue
		}
		if ptr.Deref(claim.Spec.StorageClassName, "") == classExt {
			// A claim with a selector is not provisioned (upstream: "claim Selector is not
			// supported"); it waits for a matching volume like any other.
			if claim.Spec.Selector == nil {
				c.fail(0, ruleSettledProvision, "%s Pending", k)
				continue
			}
		}
		for _, pv := range pvs {
			if pv.Spec.ClaimRef == nil && usable(pv) && pv.Status.Phase == v1.VolumeAvailable && c.fitsMatched(pv, claim) == nil {
				c.fail(0, ruleSettledFreeFits, "%s Pending; %s", k, describePV(pv))
				break
			}
		}
	}
}

func (c *checker) fitsMatched(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	if err := fitsAlways(pv, claim); err != nil {
		return err
	}
	if claim.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(claim.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pv.Labels)) {
			return fmt.Errorf("selector")
		}
	}
	return nil
}

// fitsRebind is what a volume must meet to be bound again to the claim that names it: class,
// volume mode, access modes, and the capacity the claim had (its status; its request may have
// grown since, for an expansion).
func fitsRebind(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	if err := fitsClass(pv, claim); err != nil {
		return err
	}
	had, ok := claim.Status.Capacity[v1.ResourceStorage]
	if !ok {
		had = *claim.Spec.Resources.Requests.Storage()
	}
	if pv.Spec.Capacity.Storage().Cmp(had) < 0 {
		return fmt.Errorf("capacity %s < the claim's %s", pv.Spec.Capacity.Storage(), had.String())
	}
	c := claim.DeepCopy()
	c.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: had}
	return fitsReserved(pv, c)
}
