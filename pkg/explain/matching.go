package explain

// Matching: the binder's own code for the best volume, and why each other volume is rejected.

import (
	"fmt"
	"math/bits"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/utils/ptr"

	"github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume"
)

// reserved returns the volumes whose claimRef names this claim (by name, and UID when set).
func (a *Analyzer) reserved(claim *v1.PersistentVolumeClaim) []*v1.PersistentVolume {
	var out []*v1.PersistentVolume
	for _, pv := range a.reservedFor[claim.Namespace+"/"+claim.Name] {
		if storagehelpers.IsVolumeBoundToClaim(pv, claim) {
			out = append(out, pv)
		}
	}
	return out
}

// bestMatch asks the controller's own index which volume syncUnboundClaim would bind. The
// index holds the unclaimed volumes of the claim's class plus those reserved for the claim:
// every other volume is skipped by the binder whatever the claim (claimed by another, or of
// another class), so the answer is the one over all volumes.
func (a *Analyzer) bestMatch(claim *v1.PersistentVolumeClaim, reserved []*v1.PersistentVolume, delayBinding bool) (*v1.PersistentVolume, error) {
	class := storagehelpers.GetPersistentVolumeClaimClass(claim)
	var index *persistentvolume.VolumeIndex
	var err error
	if len(reserved) > 0 {
		index, err = persistentvolume.NewVolumeIndex(append(append([]*v1.PersistentVolume(nil), a.unclaimed[class]...), reserved...))
	} else if index = a.classIndex[class]; index == nil {
		index, err = persistentvolume.NewVolumeIndex(a.unclaimed[class])
		a.classIndex[class] = index
	}
	if err != nil {
		return nil, err
	}
	return index.FindBestMatch(claim, delayBinding)
}

// binderAccepts asks the controller's index whether it would bind the claim to this volume
// alone (the matching path, not WaitForFirstConsumer).
func binderAccepts(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) bool {
	index, err := persistentvolume.NewVolumeIndex([]*v1.PersistentVolume{pv})
	if err != nil {
		return false
	}
	best, err := index.FindBestMatch(claim, false)
	return err == nil && best != nil
}

// rejection is one reason the binder does not bind a claim to a volume; a set of them is
// computed without formatting, so thousands of candidates cost little, and put in words only
// for the volumes a report shows.
type rejection uint16

const (
	rejClaimed rejection = 1 << iota
	rejCapacity
	rejVolumeMode
	rejVAC
	rejVACDisabled
	rejDeleting
	rejAccessModes
	rejPhase
	rejSelector
	rejSelectorInvalid
	rejClass
)

// deletionRefuses says whether the binder refuses a volume because it is being deleted: it does,
// unless the volume's claimRef already carries the claim's UID (a bind it started before the
// deletion, which it completes: patches 0004 and 0006).
func deletionRefuses(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) bool {
	return pv.DeletionTimestamp != nil && (pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID)
}

// matchRejections is the set of reasons the matching path (FindMatchingVolume behind the
// controller's access-mode index) skips a volume for a claim, in the order the binder checks.
func (a *Analyzer) matchRejections(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, selector labels.Selector, selectorErr error) rejection {
	var set rejection
	reserved := storagehelpers.IsVolumeBoundToClaim(pv, claim)
	if pv.Spec.ClaimRef != nil && !reserved {
		set |= rejClaimed
	}
	set |= fitRejections(claim, pv, a.vacEnabled)
	if deletionRefuses(claim, pv) {
		set |= rejDeleting
	}
	// The index lists only volumes with every requested access mode, reserved or not.
	if !hasAccessModes(claim, pv) {
		set |= rejAccessModes
	}
	if reserved {
		return set // a reserved volume is not checked further
	}
	if pv.Status.Phase != v1.VolumeAvailable {
		set |= rejPhase
	}
	if selectorErr != nil {
		set |= rejSelectorInvalid
	} else if selector != nil && !selector.Matches(labels.Set(pv.Labels)) {
		set |= rejSelector
	}
	if storagehelpers.GetPersistentVolumeClass(pv) != storagehelpers.GetPersistentVolumeClaimClass(claim) {
		set |= rejClass
	}
	return set
}

// rejections lists in words every reason the matching path skips a volume for a claim.
func (a *Analyzer) rejections(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) []string {
	selector, err := claimSelector(claim)
	return describeRejections(a.matchRejections(claim, pv, selector, err), claim, pv, selector, err)
}

// fitRejections are the checks both paths make: size, volume mode, attributes class.
func fitRejections(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, vacEnabled bool) rejection {
	var set rejection
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	if capacity.Cmp(requested) < 0 {
		set |= rejCapacity
	}
	if storagehelpers.CheckVolumeModeMismatches(&claim.Spec, &pv.Spec) {
		set |= rejVolumeMode
	}
	claimVAC, volumeVAC := ptr.Deref(claim.Spec.VolumeAttributesClassName, ""), ptr.Deref(pv.Spec.VolumeAttributesClassName, "")
	if vacEnabled && claimVAC != volumeVAC {
		set |= rejVAC
	}
	if !vacEnabled && (claimVAC != "" || volumeVAC != "") {
		set |= rejVACDisabled
	}
	return set
}

// prebindMismatches lists every reason checkVolumeSatisfyClaim refuses a claim's pre-bound
// volume (it stops at the first).
func prebindMismatches(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) []string {
	set := fitRejections(claim, pv, utilfeature.DefaultFeatureGate.Enabled(features.VolumeAttributesClass))
	if pv.DeletionTimestamp != nil {
		set |= rejDeleting
	}
	if storagehelpers.GetPersistentVolumeClass(pv) != storagehelpers.GetPersistentVolumeClaimClass(claim) {
		set |= rejClass
	}
	if !hasAccessModes(claim, pv) {
		set |= rejAccessModes
	}
	return describeRejections(set, claim, pv, nil, nil)
}

func describeRejections(set rejection, claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, selector labels.Selector, selectorErr error) []string {
	var reasons []string
	if set&rejClaimed != 0 {
		reasons = append(reasons, "claimed by "+claimRefString(pv.Spec.ClaimRef))
	}
	if set&rejCapacity != 0 {
		requested, capacity := claim.Spec.Resources.Requests[v1.ResourceStorage], pv.Spec.Capacity[v1.ResourceStorage]
		reasons = append(reasons, fmt.Sprintf("capacity %s is less than the requested %s", capacity.String(), requested.String()))
	}
	if set&rejVolumeMode != 0 {
		reasons = append(reasons, fmt.Sprintf("volumeMode %s, the claim asks for %s", volumeMode(pv.Spec.VolumeMode), volumeMode(claim.Spec.VolumeMode)))
	}
	if set&rejVAC != 0 {
		reasons = append(reasons, fmt.Sprintf("volumeAttributesClassName %q, the claim asks for %q", ptr.Deref(pv.Spec.VolumeAttributesClassName, ""), ptr.Deref(claim.Spec.VolumeAttributesClassName, "")))
	}
	if set&rejVACDisabled != 0 {
		reasons = append(reasons, "volumeAttributesClassName is set and the VolumeAttributesClass feature is off")
	}
	if set&rejDeleting != 0 {
		reasons = append(reasons, "being deleted")
	}
	if set&rejAccessModes != 0 {
		reasons = append(reasons, fmt.Sprintf("accessModes %s lack %s", modesString(pv.Spec.AccessModes), modesString(missingAccessModes(claim, pv))))
	}
	if set&rejPhase != 0 {
		phase := string(pv.Status.Phase)
		if phase == "" {
			phase = "not yet set"
		}
		reasons = append(reasons, fmt.Sprintf("phase %s (only Available volumes are matched)", phase))
	}
	if set&rejSelectorInvalid != 0 {
		reasons = append(reasons, fmt.Sprintf("the claim's selector is invalid: %v", selectorErr))
	}
	if set&rejSelector != 0 {
		reasons = append(reasons, fmt.Sprintf("labels %s do not match the claim's selector %s", labelString(pv.Labels), selector))
	}
	if set&rejClass != 0 {
		reasons = append(reasons, fmt.Sprintf("storageClassName %q, the claim asks for %q", storagehelpers.GetPersistentVolumeClass(pv), storagehelpers.GetPersistentVolumeClaimClass(claim)))
	}
	return reasons
}

func claimSelector(claim *v1.PersistentVolumeClaim) (labels.Selector, error) {
	if claim.Spec.Selector == nil {
		return nil, nil
	}
	return metav1.LabelSelectorAsSelector(claim.Spec.Selector)
}

// nearestCandidates ranks the volumes the claim could have had: unclaimed ones of its class
// first, then of other classes; fewest reasons, then closest size. Each candidate's verdict is
// checked against the binder's own (binderAccepts).
func (a *Analyzer) nearestCandidates(claim *v1.PersistentVolumeClaim) []Candidate {
	if a.MaxCandidates <= 0 {
		return nil
	}
	type ranked struct {
		pv    *v1.PersistentVolume
		set   rejection
		other bool
		dist  int64
	}
	selector, selectorErr := claimSelector(claim)
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	var all []ranked
	consider := func(pv *v1.PersistentVolume, other bool) {
		capacity := pv.Spec.Capacity[v1.ResourceStorage]
		d := capacity.Value() - requested.Value()
		if d < 0 {
			d = -d
		}
		all = append(all, ranked{pv, a.matchRejections(claim, pv, selector, selectorErr), other, d})
	}
	class := storagehelpers.GetPersistentVolumeClaimClass(claim)
	for _, pv := range a.unclaimed[class] {
		consider(pv, false)
	}
	for _, pv := range a.released[class] {
		consider(pv, false) // an operator can hand it over
	}
	if len(all) < a.MaxCandidates {
		for c, pvs := range a.unclaimed {
			if c == class {
				continue
			}
			for _, pv := range pvs {
				consider(pv, true)
			}
		}
	}
	sort.Slice(all, func(i, j int) bool {
		x, y := all[i], all[j]
		if x.other != y.other {
			return !x.other
		}
		if nx, ny := bits.OnesCount16(uint16(x.set)), bits.OnesCount16(uint16(y.set)); nx != ny {
			return nx < ny
		}
		if x.dist != y.dist {
			return x.dist < y.dist
		}
		return x.pv.Name < y.pv.Name
	})
	if len(all) > a.MaxCandidates {
		all = all[:a.MaxCandidates]
	}
	out := make([]Candidate, 0, len(all))
	for _, c := range all {
		out = append(out, a.candidate(claim, c.pv, describeRejections(c.set, claim, c.pv, selector, selectorErr)))
	}
	return out
}

func (a *Analyzer) candidate(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, reasons []string) Candidate {
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	c := Candidate{Name: pv.Name, StorageClass: storagehelpers.GetPersistentVolumeClass(pv), Capacity: capacity.String(), Phase: string(pv.Status.Phase), Reasons: reasons}
	if claim.Spec.VolumeName == "" && !storagehelpers.IsVolumeBoundToClaim(pv, claim) && (len(reasons) == 0) != binderAccepts(claim, pv) {
		c.Reasons = append(c.Reasons, "pvc-why's reasons disagree with the binder's own matching for this volume: please report it")
	}
	return c
}

func sameClass(candidates []Candidate, class string) []Candidate {
	var out []Candidate
	for _, c := range candidates {
		if c.StorageClass == class {
			out = append(out, c)
		}
	}
	return out
}
