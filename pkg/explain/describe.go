package explain

// Words for claims, volumes, pods and events.

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

func (a *Analyzer) podsUsing(claim *v1.PersistentVolumeClaim) []*v1.Pod {
	var out []*v1.Pod
	for _, pod := range a.pods[claim.Namespace+"/"+claim.Name] {
		if pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed {
			out = append(out, pod)
		}
	}
	return out
}

// claimEvents returns the claim's newest events (of this claim, not an earlier one of the name).
func (a *Analyzer) claimEvents(claim *v1.PersistentVolumeClaim, max int) []EventSummary {
	var out []EventSummary
	for _, e := range a.events[claim.Namespace+"/"+claim.Name] {
		if e.InvolvedObject.UID != "" && claim.UID != "" && e.InvolvedObject.UID != claim.UID {
			continue
		}
		source := e.Source.Component
		if source == "" {
			source = e.ReportingController
		}
		out = append(out, EventSummary{Type: e.Type, Reason: e.Reason, Message: e.Message, Source: source, Count: e.Count, Time: eventTime(e)})
		if len(out) == max { // max 0: all
			break
		}
	}
	return out
}

func (a *Analyzer) describeClaim(claim *v1.PersistentVolumeClaim) string {
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	class := storagehelpers.GetPersistentVolumeClaimClass(claim)
	s := fmt.Sprintf("claim: class %q, requests %s, accessModes %s, volumeMode %s", class, requested.String(), modesString(claim.Spec.AccessModes), volumeMode(claim.Spec.VolumeMode))
	if claim.Spec.Selector != nil {
		if sel, err := metav1.LabelSelectorAsSelector(claim.Spec.Selector); err == nil {
			s += ", selector " + sel.String()
		}
	}
	if claim.Spec.VolumeName != "" {
		s += fmt.Sprintf(", spec.volumeName %q", claim.Spec.VolumeName)
	}
	return s + fmt.Sprintf(", created %s", a.ago(claim.CreationTimestamp.Time))
}

func (a *Analyzer) describeBoundVolume(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) string {
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	s := fmt.Sprintf("%q (%s, class %q)", pv.Name, capacity.String(), storagehelpers.GetPersistentVolumeClass(pv))
	if pv.Status.LastPhaseTransitionTime != nil && pv.Status.Phase == v1.VolumeBound {
		s += fmt.Sprintf(" since %s", a.ago(pv.Status.LastPhaseTransitionTime.Time))
	}
	if metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBoundByController) {
		s += ", chosen by the binder"
	} else {
		s += ", pre-bound by spec.volumeName"
	}
	if metav1.HasAnnotation(pv.ObjectMeta, storagehelpers.AnnDynamicallyProvisioned) {
		s += fmt.Sprintf(", provisioned by %s", pv.Annotations[storagehelpers.AnnDynamicallyProvisioned])
	}
	if manager := statusManager(claim); manager != "" {
		s += fmt.Sprintf(", status written by %s", manager)
	}
	return s
}

// statusManager is the field manager that last wrote the claim's status (managedFields are
// absent from `kubectl get -o yaml` dumps, so this is live only).
func statusManager(claim *v1.PersistentVolumeClaim) string {
	var manager string
	var newest time.Time
	for _, mf := range claim.ManagedFields {
		if mf.Subresource == "status" && mf.Time != nil && !mf.Time.Time.Before(newest) {
			manager, newest = mf.Manager, mf.Time.Time
		}
	}
	return manager
}

func (a *Analyzer) binderHint() string {
	if !a.binder.Known {
		return ""
	}
	// Only when nobody can be binding: not ours, and no KCM leader, or one known to run without
	// its binder (a KCM that is not a pod here may well be binding).
	if a.binder.Ours == "" && (a.binder.KCM == "" || a.binder.KCMBinder == "disabled") {
		return " (no binder is running: " + a.binder.Summary + ")"
	}
	return ""
}

func (a *Analyzer) ago(t time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	d := a.s.Now.Sub(t).Round(time.Second)
	if d < 0 {
		d = 0
	}
	return d.String() + " ago"
}

func claimRefString(ref *v1.ObjectReference) string {
	if ref == nil {
		return "no claim"
	}
	s := fmt.Sprintf("claim %s/%s", ref.Namespace, ref.Name)
	if ref.UID != "" {
		s += fmt.Sprintf(" (uid %s)", ref.UID)
	}
	return s
}

func hasAccessModes(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) bool {
	return len(missingAccessModes(claim, pv)) == 0
}

func missingAccessModes(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) []v1.PersistentVolumeAccessMode {
	var missing []v1.PersistentVolumeAccessMode
	for _, want := range claim.Spec.AccessModes {
		found := false
		for _, have := range pv.Spec.AccessModes {
			if have == want {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, want)
		}
	}
	return missing
}

func modesString(modes []v1.PersistentVolumeAccessMode) string {
	s := make([]string, len(modes))
	for i, m := range modes {
		s[i] = string(m)
	}
	return "[" + strings.Join(s, ",") + "]"
}

func volumeMode(mode *v1.PersistentVolumeMode) string {
	if mode == nil {
		return string(v1.PersistentVolumeFilesystem)
	}
	return string(*mode)
}

func labelString(l map[string]string) string {
	if len(l) == 0 {
		return "{}"
	}
	return "{" + labels.Set(l).String() + "}"
}

func podNames(pods []*v1.Pod) []string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	return names
}
