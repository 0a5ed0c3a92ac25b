package explain

// The verdicts of a claim that names its volume (spec.volumeName).

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume"
)

// explainPrebound follows syncUnboundClaim's branch for a claim with spec.volumeName.
func (a *Analyzer) explainPrebound(claim *v1.PersistentVolumeClaim, r *Report) {
	r.Volume = claim.Spec.VolumeName
	pv := a.volumes[claim.Spec.VolumeName]
	switch {
	case pv == nil:
		r.Verdict = PreboundVolumeMissing
		r.Summary = fmt.Sprintf("pre-bound by spec.volumeName to PV %q, which does not exist: it binds as soon as that PV is created", claim.Spec.VolumeName)
	case pv.Spec.ClaimRef == nil:
		reasons := prebindMismatches(claim, pv)
		binderErr := persistentvolume.CheckVolumeSatisfyClaim(pv, claim)
		if binderErr != nil {
			if len(reasons) == 0 {
				reasons = append(reasons, binderErr.Error())
			}
			r.Verdict = PreboundVolumeMismatch
			r.Summary = fmt.Sprintf("pre-bound by spec.volumeName to PV %q, which does not fit: %s", pv.Name, strings.Join(reasons, "; "))
			r.Candidates = append(r.Candidates, a.candidate(claim, pv, reasons))
			r.Details = append(r.Details, fmt.Sprintf("binder: %q (checkVolumeSatisfyClaim)", binderErr.Error()))
			return
		}
		r.Verdict = BindPending
		r.Summary = fmt.Sprintf("pre-bound to PV %q, which fits and is unclaimed: the binder binds them on its next look%s", pv.Name, a.binderHint())
	case storagehelpers.IsVolumeBoundToClaim(pv, claim) && deletionRefuses(claim, pv):
		r.Verdict = PreboundVolumeMismatch
		r.Summary = fmt.Sprintf("PV %q and the claim name each other, but the PV is being deleted: the binder does not bind it, and the claim binds to a PV of that name created later", pv.Name)
		r.Candidates = append(r.Candidates, a.candidate(claim, pv, []string{"being deleted"}))
	case storagehelpers.IsVolumeBoundToClaim(pv, claim):
		r.Verdict = BindPending
		r.Summary = fmt.Sprintf("PV %q and the claim name each other: the binder completes the bind on its next look%s", pv.Name, a.binderHint())
	default:
		ref := pv.Spec.ClaimRef
		if ref.Namespace == claim.Namespace && ref.Name == claim.Name {
			// Same name, other UID: an earlier claim of this name used the volume.
			r.Verdict = VolumeReleased
			r.Summary = fmt.Sprintf("PV %q still belongs to an earlier claim of this name (uid %s), phase %s, reclaim policy %s: an operator must clear its spec.claimRef (or claimRef.uid) to hand it to this claim",
				pv.Name, ref.UID, pv.Status.Phase, pv.Spec.PersistentVolumeReclaimPolicy)
			if pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimDelete {
				r.Summary = fmt.Sprintf("PV %q still belongs to an earlier claim of this name (uid %s) and will be deleted (reclaim policy Delete): this claim will not get it", pv.Name, ref.UID)
			}
			return
		}
		r.Verdict = PreboundVolumeTaken
		r.Summary = fmt.Sprintf("pre-bound to PV %q, which is bound to another claim, %s", pv.Name, claimRefString(ref))
	}
}
