package invariants

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// AnnSelectedNode is the node kube-scheduler chose for a WaitForFirstConsumer claim's pod.
const AnnSelectedNode = "volume.kubernetes.io/selected-node"

// Binding is how a user asked for a volume and a claim to be bound, as the harness recorded it
// when each was created (not as the binder left them).
type Binding struct {
	// Prebound: the claim was created naming the volume in spec.volumeName.
	Prebound bool
	// Reserved: the volume was created (or set by a user or kube-scheduler) with a claimRef
	// naming the claim.
	Reserved bool
	// UserBound: the volume was created with the UID of a claim that already named it: the user
	// bound the two, the binder only completes the claim's status.
	UserBound bool
}

// Fits says whether pv may serve claim, by this package's own code and the documented contract of
// each way to bind (docs/maintainers/torture.md): a claim pre-bound by spec.volumeName gets a PV of
// its class, size, volume mode and access modes ("Reserving a PersistentVolume": the control plane
// still checks them); a PV reserving its claim by claimRef is checked for size, volume mode and
// access modes, not the class (upstream returns a volume bound to the claim before it compares
// classes); when both name each other nothing is checked (the user bound them); a claim the binder
// matched also gets its selector; node affinity when kube-scheduler selected a node.
func Fits(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim, b Binding) error {
	if b.Prebound && b.Reserved || b.UserBound {
		// Both objects name each other: the user bound them, the binder only completes it
		// (upstream syncUnboundClaim: "volume already bound to this claim; finish the binding";
		// syncBoundClaim: "claim is already correctly bound" for a volume created with the UID of
		// a claim that names it).
		return nil
	}
	if err := FitsReserved(pv, claim); err != nil {
		return err
	}
	if err := FitsClass(pv, claim); err != nil && (b.Prebound || !b.Reserved) {
		return err
	}
	if !b.Prebound && !b.Reserved {
		if err := FitsSelector(pv, claim); err != nil {
			return err
		}
	}
	if node := claim.Annotations[AnnSelectedNode]; node != "" && AffinityNode(pv) != "" && AffinityNode(pv) != node {
		if b.Reserved {
			return fmt.Errorf("the volume is on %s, the claim's pod on %s (the volume reserves the claim by claimRef)", AffinityNode(pv), node)
		}
		return fmt.Errorf("the volume is on %s, the claim's pod on %s", AffinityNode(pv), node)
	}
	return nil
}

// FitsAlways: size, class, volume mode, access modes.
func FitsAlways(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	if err := FitsClass(pv, claim); err != nil {
		return err
	}
	return FitsReserved(pv, claim)
}

// FitsMatched is what a volume the binder matches to a claim must meet: FitsAlways and the
// claim's selector.
func FitsMatched(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	if err := FitsAlways(pv, claim); err != nil {
		return err
	}
	return FitsSelector(pv, claim)
}

// FitsClass: the volume's class is the claim's.
func FitsClass(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	if pv.Spec.StorageClassName != ptr.Deref(claim.Spec.StorageClassName, "") {
		return fmt.Errorf("class %q, claim wants %q", pv.Spec.StorageClassName, ptr.Deref(claim.Spec.StorageClassName, ""))
	}
	return nil
}

// FitsSelector: the volume's labels match the claim's selector, if it has one.
func FitsSelector(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	if claim.Spec.Selector == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(claim.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(pv.Labels)) {
		return fmt.Errorf("labels %v do not match the selector %v", pv.Labels, claim.Spec.Selector.MatchLabels)
	}
	return nil
}

// FitsReserved is what a PV reserving its claim by claimRef must meet: upstream's contract
// (FindMatchingVolume returns a volume bound to the claim before it compares classes) checks size,
// volume mode and (through the access-mode index) access modes, not the class.
func FitsReserved(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	if pv.Spec.Capacity.Storage().Cmp(*claim.Spec.Resources.Requests.Storage()) < 0 {
		return fmt.Errorf("capacity %s < request %s", pv.Spec.Capacity.Storage(), claim.Spec.Resources.Requests.Storage())
	}
	if ptr.Deref(pv.Spec.VolumeMode, v1.PersistentVolumeFilesystem) != ptr.Deref(claim.Spec.VolumeMode, v1.PersistentVolumeFilesystem) {
		return fmt.Errorf("volume mode %s, claim wants %s", ptr.Deref(pv.Spec.VolumeMode, ""), ptr.Deref(claim.Spec.VolumeMode, ""))
	}
	for _, m := range claim.Spec.AccessModes {
		if !slices.Contains(pv.Spec.AccessModes, m) {
			return fmt.Errorf("access modes %v, claim wants %v", pv.Spec.AccessModes, claim.Spec.AccessModes)
		}
	}
	return nil
}

// FitsRebind is what a volume must meet to be bound again to the claim that names it: class,
// volume mode, access modes, and the capacity the claim had (its status; its request may have
// grown since, for an expansion).
func FitsRebind(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	if err := FitsClass(pv, claim); err != nil {
		return err
	}
	had, ok := claim.Status.Capacity[v1.ResourceStorage]
	if !ok {
		had = *claim.Spec.Resources.Requests.Storage()
	}
	if pv.Spec.Capacity.Storage().Cmp(had) < 0 {
		return fmt.Errorf("capacity %s < the claim's %s", pv.Spec.Capacity.Storage(), had.String())
	}
	c := claim.DeepCopy()
	c.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: had}
	return FitsReserved(pv, c)
}

// AffinityNode is the node a local volume's node affinity names, or "".
func AffinityNode(pv *v1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, t := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range t.MatchExpressions {
			if e.Key == "kubernetes.io/hostname" && len(e.Values) > 0 {
				return e.Values[0]
			}
		}
	}
	return ""
}
