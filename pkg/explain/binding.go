package explain

// The binding verdicts: Lost, Bound, and for a Pending claim the path the binder takes.

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

func (a *Analyzer) explainBinding(claim *v1.PersistentVolumeClaim, r *Report) {
	if claim.Status.Phase == v1.ClaimLost {
		r.Verdict, r.Volume = Lost, claim.Spec.VolumeName
		pv := a.volumes[claim.Spec.VolumeName]
		switch {
		case pv == nil:
			r.Summary = fmt.Sprintf("Lost: its volume %q was deleted; the data is gone unless a PV of that name is re-created with claimRef uid %s", claim.Spec.VolumeName, claim.UID)
		default:
			r.Summary = fmt.Sprintf("Lost: its volume %q now belongs to %s", pv.Name, claimRefString(pv.Spec.ClaimRef))
		}
		return
	}
	if metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBindCompleted) {
		pv := a.volumes[claim.Spec.VolumeName]
		switch {
		case pv == nil:
			r.Verdict, r.Volume = Lost, claim.Spec.VolumeName
			r.Summary = fmt.Sprintf("bound to volume %q, which no longer exists: the binder will mark the claim Lost", claim.Spec.VolumeName)
		case pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID:
			r.Verdict, r.Volume = Lost, pv.Name
			r.Summary = fmt.Sprintf("bound to volume %q, which now belongs to %s: the binder will mark the claim Lost", pv.Name, claimRefString(pv.Spec.ClaimRef))
		default:
			r.Verdict, r.Volume = Bound, pv.Name
			r.Summary = fmt.Sprintf("Bound to %s", a.describeBoundVolume(claim, pv))
			if claim.Status.Phase != v1.ClaimBound {
				r.Verdict = BindPending
				r.Summary = fmt.Sprintf("bound to volume %q, but its status still says %s: the binder's last write (claim status) is pending", pv.Name, r.Phase)
			}
		}
		return
	}

	if claim.Spec.VolumeName != "" {
		a.explainPrebound(claim, r)
		return
	}

	// Reservations first: a volume whose claimRef names this claim is what the binder binds,
	// whatever the class (kube-scheduler, external-provisioner and operators write these).
	reserved := a.reserved(claim)
	delayBinding, err := storagehelpers.IsDelayBindingMode(claim, a.classLister)
	if err != nil {
		r.Details = append(r.Details, fmt.Sprintf("class: %v", err))
	}
	best, err := a.bestMatch(claim, reserved, delayBinding)
	if err != nil {
		r.Verdict = NoMatch
		r.Summary = fmt.Sprintf("the binder cannot match it: %v", err)
		return
	}
	if best != nil {
		r.Verdict, r.Volume = BindPending, best.Name
		how := "the smallest Available volume that fits"
		if storagehelpers.IsVolumeBoundToClaim(best, claim) {
			how = "reserved for it by the volume's claimRef"
		}
		r.Summary = fmt.Sprintf("the binder would bind it to %q (%s) but has not yet%s", best.Name, how, a.binderHint())
		return
	}
	if len(reserved) > 0 {
		pv := reserved[0]
		r.Verdict, r.Volume = ReservedVolumeMismatch, pv.Name
		reasons := a.rejections(claim, pv)
		r.Summary = fmt.Sprintf("volume %q reserves this claim by claimRef but does not fit it: %s", pv.Name, strings.Join(reasons, "; "))
		r.Candidates = append(r.Candidates, a.candidate(claim, pv, reasons))
		return
	}

	className := storagehelpers.GetPersistentVolumeClaimClass(claim)
	class := a.classes[className]
	if delayBinding && !storagehelpers.IsDelayBindingProvisioning(claim) {
		a.explainWaitForConsumer(claim, r)
		return
	}
	provisioner := claim.Annotations[storagehelpers.AnnStorageProvisioner]
	if provisioner == "" {
		provisioner = claim.Annotations[storagehelpers.AnnBetaStorageProvisioner]
	}
	if provisioner == "" && class != nil {
		provisioner = class.Provisioner
	}
	r.Candidates = a.nearestCandidates(claim)
	switch {
	case className != "" && class == nil && a.s.Classes != nil:
		r.Verdict = NoMatch
		r.Summary = fmt.Sprintf("no PV of class %q fits, and StorageClass %q does not exist, so nothing provisions one", className, className)
	case className != "" && provisioner != "" && provisioner != storagehelpers.NotSupportedProvisioner:
		a.explainProvisioning(claim, provisioner, r)
		r.Candidates = sameClass(r.Candidates, className) // other classes are no hint here
	case className == "":
		r.Verdict = NoMatch
		r.Summary = "no PV without a storage class fits it, and no storage class is set, so nothing provisions one"
	default:
		r.Verdict = NoMatch
		r.Summary = fmt.Sprintf("no PV of class %q fits it, and the class provisions nothing (%s)", className, storagehelpers.NotSupportedProvisioner)
	}
	if len(r.Candidates) == 0 && r.Verdict == NoMatch {
		r.Summary += "; there is no unclaimed PV at all in that class"
	}
}
