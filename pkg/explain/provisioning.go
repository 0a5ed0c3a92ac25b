package explain

// The verdicts of dynamic provisioning (the claim handed to a provisioner).

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

func (a *Analyzer) explainProvisioning(claim *v1.PersistentVolumeClaim, provisioner string, r *Report) {
	where := ""
	if node := claim.Annotations[storagehelpers.AnnSelectedNode]; node != "" {
		where = fmt.Sprintf(" on node %q (chosen by kube-scheduler)", node)
	}
	// The provisioner's own word: the binder repeats ExternalProvisioning ("waiting for ...") on
	// every sync, so that event says only that the claim was handed over.
	var lastProvisioning, handedOver *EventSummary
	for _, e := range a.claimEvents(claim, 0) {
		switch e.Reason {
		case "ProvisioningFailed", "ProvisioningSucceeded", "Provisioning":
			if lastProvisioning == nil {
				lastProvisioning = &e
			}
		case "ExternalProvisioning":
			if handedOver == nil {
				handedOver = &e
			}
		}
	}
	if !metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnStorageProvisioner) && !metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBetaStorageProvisioner) {
		r.Verdict = Provisioning
		r.Summary = fmt.Sprintf("no PV fits; the binder has not yet handed the claim to provisioner %q (no %s annotation)%s", provisioner, storagehelpers.AnnStorageProvisioner, a.binderHint())
		return
	}
	if lastProvisioning != nil && lastProvisioning.Reason == "ProvisioningFailed" {
		r.Verdict = ProvisioningFailed
		r.Summary = fmt.Sprintf("provisioner %q failed to create a volume%s, %s: %s", provisioner, where, a.ago(lastProvisioning.Time), lastProvisioning.Message)
		return
	}
	r.Verdict = Provisioning
	r.Summary = fmt.Sprintf("waiting for provisioner %q to create a volume%s", provisioner, where)
	switch {
	case lastProvisioning != nil:
		r.Summary += fmt.Sprintf(" (its last word, %s: %s)", a.ago(lastProvisioning.Time), lastProvisioning.Message)
	case handedOver != nil:
		r.Summary += fmt.Sprintf("; the binder handed the claim over %s and the provisioner has said nothing since: is it running?", a.ago(handedOver.Time))
	default:
		r.Summary += "; no event from it yet: is it running?"
	}
}
