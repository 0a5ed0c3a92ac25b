package explain

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// annStorageResizer names the CSI driver that expands the claim (set by the resize controller).
const annStorageResizer = "volume.kubernetes.io/storage-resizer"

// explainResize compares the three sizes of a bound claim (spec request, PV capacity, claim
// status capacity) and reads allocatedResourceStatuses and the resize conditions to say which
// side an expansion waits for: the controller side (external-resizer / KCM's expand
// controller grows the volume, then the PV) or the node side (kubelet grows the file system
// at the next mount, then the claim's status).
func (a *Analyzer) explainResize(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) *Resize {
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	statusCap := claim.Status.Capacity[v1.ResourceStorage]
	var volumeCap resource.Quantity
	if pv != nil {
		volumeCap = pv.Spec.Capacity[v1.ResourceStorage]
	}
	r := &Resize{State: ResizeNone, Requested: requested.String(), VolumeCapacity: volumeCap.String(), StatusCapacity: statusCap.String()}
	className := storagehelpers.GetPersistentVolumeClaimClass(claim)
	if class, ok := a.classes[className]; ok {
		allowed := class.AllowVolumeExpansion != nil && *class.AllowVolumeExpansion
		r.ExpansionAllowed = &allowed
		if !allowed {
			r.ExpansionRejected = fmt.Sprintf("StorageClass %q does not set allowVolumeExpansion: the apiserver refuses a larger request for this claim", className)
		}
	} else if className == "" {
		allowed := false
		r.ExpansionAllowed = &allowed
		r.ExpansionRejected = "the claim has no StorageClass: the apiserver refuses a larger request for it"
	}
	var fsResizePending bool
	for _, c := range claim.Status.Conditions {
		switch c.Type {
		case v1.PersistentVolumeClaimResizing, v1.PersistentVolumeClaimFileSystemResizePending,
			v1.PersistentVolumeClaimControllerResizeError, v1.PersistentVolumeClaimNodeResizeError:
			if c.Status != v1.ConditionTrue {
				continue
			}
			text := string(c.Type)
			if c.Message != "" {
				text += ": " + c.Message
			}
			r.Conditions = append(r.Conditions, text)
			if c.Type == v1.PersistentVolumeClaimFileSystemResizePending {
				fsResizePending = true
			}
		}
	}
	allocated := claim.Status.AllocatedResourceStatuses[v1.ResourceStorage]
	r.AllocatedStatus = string(allocated)
	target := requested.String()
	if q, ok := claim.Status.AllocatedResources[v1.ResourceStorage]; ok {
		target = q.String()
	}
	resizer := claim.Annotations[annStorageResizer]
	controllerSide := "the controller side (KCM's expand controller or the CSI driver's external-resizer)"
	if resizer != "" {
		controllerSide = fmt.Sprintf("the controller side (resizer %q)", resizer)
	}
	switch {
	case allocated == v1.PersistentVolumeClaimControllerResizeInProgress:
		r.State = ResizeControllerInProgress
		r.Summary = fmt.Sprintf("expanding to %s: %s is growing the volume (PV capacity %s)", target, controllerSide, volumeCap.String())
	case allocated == v1.PersistentVolumeClaimControllerResizeInfeasible:
		r.State = ResizeControllerInfeasible
		r.Summary = fmt.Sprintf("expansion to %s failed for good on %s: lower the request (not below %s) to recover", target, controllerSide, statusCap.String())
	case allocated == v1.PersistentVolumeClaimNodeResizeInProgress:
		r.State = ResizeNodeInProgress
		r.Summary = fmt.Sprintf("expanding to %s: the volume is grown, kubelet is growing the file system%s", target, a.nodeSide(claim))
	case allocated == v1.PersistentVolumeClaimNodeResizeInfeasible:
		r.State = ResizeNodeInfeasible
		r.Summary = fmt.Sprintf("expansion to %s failed for good on the node%s: lower the request (not below %s) to recover", target, a.nodeSide(claim), statusCap.String())
	case allocated == v1.PersistentVolumeClaimNodeResizePending || fsResizePending:
		r.State = ResizeNodePending
		r.Summary = fmt.Sprintf("the volume is grown to %s; the file system is grown by kubelet%s", volumeCap.String(), a.nodeSide(claim))
	case requested.Cmp(volumeCap) > 0:
		r.State = ResizeControllerPending
		r.Summary = fmt.Sprintf("requests %s, the volume has %s: waiting for %s to start", requested.String(), volumeCap.String(), controllerSide)
	case requested.Cmp(statusCap) > 0:
		r.State = ResizeNodePending
		r.Summary = fmt.Sprintf("the volume has %s, the claim's status says %s: the file system is grown by kubelet%s", volumeCap.String(), statusCap.String(), a.nodeSide(claim))
	default:
		r.Summary = fmt.Sprintf("no resize pending: requests %s, volume %s, status %s", requested.String(), volumeCap.String(), statusCap.String())
	}
	return r
}

// nodeSide says where and when kubelet grows the file system: now, on the node of a running
// pod that uses the claim, or at the next mount.
func (a *Analyzer) nodeSide(claim *v1.PersistentVolumeClaim) string {
	var running []string
	for _, pod := range a.podsUsing(claim) {
		if pod.Spec.NodeName != "" {
			running = append(running, fmt.Sprintf("pod %s on node %s", pod.Name, pod.Spec.NodeName))
		}
	}
	if len(running) == 0 {
		return " at the next mount: no pod uses the claim now, start one"
	}
	return " for " + strings.Join(running, ", ")
}
