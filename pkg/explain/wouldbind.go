package explain

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume"
)

// WouldBind says whether the binder's own code would bind the claim now, and to which volume: the
// claims Explain reports as BindPending, without the explanation (no candidates, rejections or
// events), so that it is cheap enough to ask for many claims at every scrape (pkg/pendingclaims).
// A match for a claim that nothing reserves depends only on what the matcher reads of the claim
// (class, access modes, volume mode, size, selector, attributes class), so claims of the same
// shape share one search of the volume index.
func (a *Analyzer) WouldBind(claim *v1.PersistentVolumeClaim) (string, bool) {
	if claim.DeletionTimestamp != nil || claim.Status.Phase == v1.ClaimLost {
		return "", false
	}
	if metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBindCompleted) {
		pv := a.volumes[claim.Spec.VolumeName]
		ok := pv != nil && pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.UID == claim.UID && claim.Status.Phase != v1.ClaimBound
		return claim.Spec.VolumeName, ok
	}
	if name := claim.Spec.VolumeName; name != "" {
		switch pv := a.volumes[name]; {
		case pv == nil:
			return "", false
		case pv.Spec.ClaimRef == nil:
			return name, persistentvolume.CheckVolumeSatisfyClaim(pv, claim) == nil
		default:
			return name, storagehelpers.IsVolumeBoundToClaim(pv, claim) && !deletionRefuses(claim, pv)
		}
	}
	reserved := a.reserved(claim)
	delayBinding, _ := storagehelpers.IsDelayBindingMode(claim, a.classLister) // as explainBinding: false on error
	var best *v1.PersistentVolume
	var err error
	if len(reserved) > 0 {
		best, err = a.bestMatch(claim, reserved, delayBinding)
	} else {
		key := claimShape(claim, delayBinding)
		var cached bool
		if best, cached = a.matches[key]; !cached {
			if best, err = a.bestMatch(claim, nil, delayBinding); err == nil {
				a.matches[key] = best
			}
		}
	}
	if err != nil || best == nil {
		return "", false
	}
	return best.Name, true
}

// claimShape is what matching a claim against unreserved volumes reads of it.
func claimShape(claim *v1.PersistentVolumeClaim, delayBinding bool) string {
	modes := slices.Clone(claim.Spec.AccessModes)
	slices.Sort(modes)
	request := claim.Spec.Resources.Requests[v1.ResourceStorage]
	volumeMode, vac := "", ""
	if claim.Spec.VolumeMode != nil {
		volumeMode = string(*claim.Spec.VolumeMode)
	}
	if claim.Spec.VolumeAttributesClassName != nil {
		vac = "=" + *claim.Spec.VolumeAttributesClassName
	}
	return fmt.Sprintf("%s|%v|%s|%s|%s|%s|%v", storagehelpers.GetPersistentVolumeClaimClass(claim), modes, volumeMode,
		request.String(), metav1.FormatLabelSelector(claim.Spec.Selector), vac, delayBinding)
}

// Volume is the snapshot's volume of that name, or nil (indexed once by NewAnalyzer).
func (a *Analyzer) Volume(name string) *v1.PersistentVolume { return a.volumes[name] }
