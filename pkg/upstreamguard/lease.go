package upstreamguard

import (
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
)

// DefaultLeaseName is kube-controller-manager's leader-election Lease (--leader-elect-resource-name).
const DefaultLeaseName = "kube-controller-manager"

// defaultLeaseDuration is client-go's, used when a Lease does not say.
const defaultLeaseDuration = 15 * time.Second

// LiveHolder returns a Lease's holder if it was renewed within its duration by now, and how long
// ago. observedRenew, when not zero, is when this process saw the current renewTime appear: a
// holder whose clock runs behind ours still counts as live for a duration after that, as client-go's
// leader election judges by its own observation too.
func LiveHolder(l *coordinationv1.Lease, now, observedRenew time.Time) (string, time.Duration, bool) {
	if l == nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.RenewTime == nil {
		return "", 0, false
	}
	age := now.Sub(l.Spec.RenewTime.Time)
	if !observedRenew.IsZero() && now.Sub(observedRenew) < age {
		age = now.Sub(observedRenew)
	}
	if age > leaseDuration(l) {
		return "", 0, false
	}
	return *l.Spec.HolderIdentity, max(age, 0).Round(time.Second), true
}

func leaseDuration(l *coordinationv1.Lease) time.Duration {
	if l.Spec.LeaseDurationSeconds != nil {
		return time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return defaultLeaseDuration
}

// HolderNode is the host a kube-controller-manager Lease holder runs on: KCM's identity is
// <hostname>_<uuid>, and a static KCM's mirror pod has that host as its node.
func HolderNode(holder string) string {
	node, _, _ := strings.Cut(holder, "_")
	return strings.ToLower(node)
}

// leaderPods returns the KCM pods on the node of the Lease's live holder. ok is false when no
// holder is live or none of pods runs there (KCM not run as pods here, or not seen yet).
func leaderPods(pods []*corev1.Pod, lease *coordinationv1.Lease, now, observedRenew time.Time) (holder string, leaders []*corev1.Pod, ok bool) {
	holder, _, live := LiveHolder(lease, now, observedRenew)
	if !live {
		return "", nil, false
	}
	node := HolderNode(holder)
	for _, pod := range pods {
		if strings.ToLower(pod.Spec.NodeName) == node && pod.DeletionTimestamp == nil &&
			pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			leaders = append(leaders, pod)
		}
	}
	return holder, leaders, len(leaders) > 0
}

// binderPods decides which KCM pods may be running the PersistentVolume binder now.
//
// With leader election, KCM runs its controllers only in the instance that holds its Lease: during
// a rollout node by node, unrolled KCMs with the binder enabled are standbys and bind nothing, and
// holding our writes for them would leave nobody binding whenever a rolled KCM leads. So when the
// Lease has a live holder whose pod is here, only that pod counts. Without that (no Lease: KCM runs
// without leader election; an expired Lease: any standby may take it over within seconds; a holder
// that is not a pod here), every KCM pod with the binder enabled counts, as before.
func binderPods(pods []*corev1.Pod, lease *coordinationv1.Lease, now, observedRenew time.Time) (active []*corev1.Pod, leader string) {
	candidates := pods
	if holder, leaders, ok := leaderPods(pods, lease, now, observedRenew); ok {
		candidates, leader = leaders, holder
	}
	for _, pod := range candidates {
		if _, enabled := BinderControllers(pod); enabled {
			active = append(active, pod)
		}
	}
	return active, leader
}
