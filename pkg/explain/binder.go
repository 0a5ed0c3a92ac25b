package explain

import (
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/fastpv/pv-controller-manager/pkg/upstreamguard"
)

// The Leases the binders hold in kube-system.
const (
	OurLease = "pv-controller-manager"
	KCMLease = "kube-controller-manager"
)

// binderStatus says who binds: the holder of our Lease, and whether the KCM that holds its
// Lease runs its binder (read from its pod's --controllers, as the upstream-binder guard does).
func binderStatus(s *Snapshot) Binder {
	b := Binder{Known: s.HaveLeases}
	if !s.HaveLeases {
		b.Summary = "unknown: no kube-system Leases in the snapshot (add leases to the kubectl get, or allow reading them)"
		return b
	}
	var ours, kcm *coordinationv1.Lease
	for _, l := range s.Leases {
		if l.Namespace != "kube-system" && l.Namespace != "" {
			continue
		}
		switch l.Name {
		case OurLease:
			ours = l
		case KCMLease:
			kcm = l
		}
	}
	var parts []string
	if holder, renewed, ok := upstreamguard.LiveHolder(ours, s.Now, time.Time{}); ok {
		b.Ours = holder
		parts = append(parts, fmt.Sprintf("pv-controller-manager is running (Lease held by %s, renewed %s ago)", holder, renewed))
	} else {
		parts = append(parts, "pv-controller-manager is not running (no renewed "+OurLease+" Lease)")
	}
	b.KCMBinder = "unknown"
	if holder, renewed, ok := upstreamguard.LiveHolder(kcm, s.Now, time.Time{}); ok {
		b.KCM = holder
		node := upstreamguard.HolderNode(holder)
		for _, pod := range s.Pods {
			if pod.Namespace != "kube-system" || strings.ToLower(pod.Spec.NodeName) != node || pod.Labels["component"] != "kube-controller-manager" {
				continue
			}
			if controllers, enabled := upstreamguard.BinderControllers(pod); enabled {
				b.KCMBinder = "enabled"
				parts = append(parts, fmt.Sprintf("the KCM leader %s runs its own binder (--controllers=%s)", pod.Name, controllers))
			} else if pod.Status.Phase == v1.PodRunning || pod.Status.Phase == v1.PodPending {
				b.KCMBinder = "disabled"
				parts = append(parts, fmt.Sprintf("the KCM leader %s runs without its binder", pod.Name))
			}
		}
		if b.KCMBinder == "unknown" {
			parts = append(parts, fmt.Sprintf("KCM leader %s (renewed %s ago) is not a pod here, so whether it runs its binder is unknown", holder, renewed))
		}
	} else {
		parts = append(parts, "no kube-controller-manager holds its Lease")
	}
	b.Summary = strings.Join(parts, "; ")
	return b
}
