package explain

// The verdicts of WaitForFirstConsumer classes, and what a volume's node affinity rules out.

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

func (a *Analyzer) explainWaitForConsumer(claim *v1.PersistentVolumeClaim, r *Report) {
	pods := a.podsUsing(claim)
	if len(pods) == 0 {
		r.Verdict = WaitForFirstConsumer
		r.Summary = fmt.Sprintf("class %q binds at first use (WaitForFirstConsumer) and no pod uses the claim yet", storagehelpers.GetPersistentVolumeClaimClass(claim))
		return
	}
	var unscheduled []string
	for _, pod := range pods {
		if pod.Spec.NodeName == "" {
			msg := pod.Name
			for _, c := range pod.Status.Conditions {
				if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Message != "" {
					msg += fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
				}
			}
			unscheduled = append(unscheduled, msg)
		}
	}
	if len(unscheduled) == len(pods) {
		r.Verdict = WaitForPodScheduled
		r.Summary = fmt.Sprintf("class binds at first use; waiting for kube-scheduler to place pod %s and reserve a PV for the claim on that node", strings.Join(unscheduled, ", "))
		return
	}
	r.Verdict = WaitForScheduler
	r.Summary = fmt.Sprintf("pod %s is placed on node %q but no PV is reserved for the claim: kube-scheduler writes the chosen PV's claimRef (or asks for provisioning) before it binds the pod; the binder then completes the bind",
		pods[0].Name, pods[0].Spec.NodeName)
}

// nodeAffinityProblems says when the claim's volume cannot be used where its pods are (or will
// be) placed. The binder does not check node affinity; kube-scheduler and kubelet do, so a claim
// can be Bound to a volume its pod never reaches.
func (a *Analyzer) nodeAffinityProblems(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) []string {
	if pv == nil || pv.Spec.NodeAffinity == nil || len(a.nodes) == 0 {
		return nil
	}
	var problems []string
	placed := map[string]string{} // node -> who placed the claim there
	if node := claim.Annotations[storagehelpers.AnnSelectedNode]; node != "" {
		placed[node] = "kube-scheduler's selected-node"
	}
	pods := a.podsUsing(claim)
	for _, pod := range pods {
		if pod.Spec.NodeName != "" {
			placed[pod.Spec.NodeName] = "pod " + pod.Name
		}
	}
	for node, who := range placed {
		if n := a.nodes[node]; n != nil {
			if err := storagehelpers.CheckNodeAffinity(pv, n.Labels); err != nil {
				problems = append(problems, fmt.Sprintf("node affinity: PV %q cannot be used on node %q (%s): %v", pv.Name, node, who, err))
			}
		}
	}
	if len(placed) == 0 && len(pods) > 0 {
		fits := 0
		for _, n := range a.nodes {
			if storagehelpers.CheckNodeAffinity(pv, n.Labels) == nil {
				fits++
			}
		}
		if fits == 0 {
			problems = append(problems, fmt.Sprintf("node affinity: no node satisfies PV %q's node affinity, so pods using the claim cannot be scheduled", pv.Name))
		}
	}
	sort.Strings(problems)
	return problems
}
