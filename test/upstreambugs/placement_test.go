package upstreambugs

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
)

func localVolume(name, node string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:      modes,
			StorageClassName: "local",
			// A user made the volume reserve the claim by name.
			ClaimRef: &v1.ObjectReference{Namespace: "ns1", Name: "c-7"},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
}

func node(name string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
}

// Torture bug 20 (seed 1796307058279983682, both binders; upstream v1.37.2 in 6 seeds of a
// 30-minute run): a WaitForFirstConsumer claim ends Bound to a local volume on node-a while its pod
// runs on node-b. Two volumes reserve the claim by claimRef: pv-4 on node-b, whose access modes the
// claim does not ask for, and pv-5 on node-a, which fits. FindMatchingVolume, as kube-scheduler's
// VolumeBinding plugin calls it (with the node), returns the first volume that reserves the claim
// without checking its access modes, and answers "no match" for any node that volume is not on
// even when another reserving volume there fits. So the pod can go to node-b only, and kube-scheduler
// writes pv-4's claimRef. The binder (node nil) then binds pv-5, the one reserving volume of the
// claim's access modes, without knowing the pod's node. What a fixed FindMatchingVolume would return
// is in each case's comment; the test asserts today's answer.
func TestSchedulerMatchesAReservingVolumeWithoutItsAccessModes(t *testing.T) {
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "c-7", UID: "uid-c-7"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			StorageClassName: ptrTo("local"),
		},
	}
	pv4 := localVolume("pv-4", "node-b", v1.ReadWriteMany)
	pv5 := localVolume("pv-5", "node-a", v1.ReadWriteOnce)
	volumes := []*v1.PersistentVolume{pv4, pv5}

	// node-b: pv-4, though its access modes lack ReadWriteOnce (fixed: no match).
	if got, err := volume.FindMatchingVolume(claim, volumes, node("node-b"), nil, true, true); err != nil || got != pv4 {
		t.Errorf("kube-scheduler's match on node-b: %v, %v; upstream today returns pv-4", name(got), err)
	}
	// node-a: no match, though pv-5 there reserves the claim and fits (fixed: pv-5).
	if got, err := volume.FindMatchingVolume(claim, volumes, node("node-a"), nil, true, true); err != nil || got != nil {
		t.Errorf("kube-scheduler's match on node-a: %v, %v; upstream today returns no match", name(got), err)
	}
	// The binder (no node) among the volumes of the claim's access modes: pv-5, wherever the pod is.
	if got, err := volume.FindMatchingVolume(claim, []*v1.PersistentVolume{pv5}, nil, nil, true, true); err != nil || got != pv5 {
		t.Errorf("the binder's match: %v, %v; upstream today returns pv-5", name(got), err)
	}
}

func ptrTo[T any](v T) *T { return &v }

func name(pv *v1.PersistentVolume) string {
	if pv == nil {
		return "no match"
	}
	return pv.Name
}
