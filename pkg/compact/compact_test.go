package compact

import (
	"bytes"
	"fmt"
	"reflect"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func testVolume(name string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-pv-" + name), ResourceVersion: "17",
			Labels: map[string]string{"app": "db"}, Annotations: map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"},
			Finalizers:    []string{"kubernetes.io/pv-protection"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadOnlyMany},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              "fast",
			VolumeMode:                    ptr.To(v1.PersistentVolumeFilesystem),
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{
				Driver: "csi.example.com", VolumeHandle: "handle-" + name, FSType: "ext4",
				VolumeAttributes: map[string]string{"tier": "gold"}}},
			ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "ns", Name: name, UID: types.UID("uid-pvc-" + name)},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: []string{"node-1"}}}}}}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
}

func testClaim(name string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-pvc-" + name), ResourceVersion: "18",
			Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}, Finalizers: []string{"kubernetes.io/pvc-protection"}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To("fast"),
			VolumeName:       name,
			VolumeMode:       ptr.To(v1.PersistentVolumeFilesystem),
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
	}
}

// decoded returns obj as the informers get it: decoded from its protobuf, sharing nothing.
func decoded[T any, P interface {
	*T
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}](t *testing.T, obj P) P {
	t.Helper()
	data, err := obj.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out := P(new(T))
	if err := out.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	return out
}

func same[M any](a, b M) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func TestTransformSharesAlikePartsAndChangesNothing(t *testing.T) {
	s := New()
	a, b := decoded(t, testVolume("a")), decoded(t, testVolume("b"))
	wantA, wantB := a.DeepCopy(), b.DeepCopy()
	wantA.ManagedFields, wantB.ManagedFields = nil, nil
	for _, pv := range []*v1.PersistentVolume{a, b} {
		if _, err := s.Transform(pv); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(a, wantA) || !reflect.DeepEqual(b, wantB) {
		t.Fatalf("a transform changed a volume beyond its managedFields:\n%v\n%v", a, wantA)
	}
	// What the binder would write back is what it read.
	for _, pair := range [][2]*v1.PersistentVolume{{a, wantA}, {b, wantB}} {
		got, _ := pair[0].Marshal()
		want, _ := pair[1].Marshal()
		if !bytes.Equal(got, want) {
			t.Errorf("volume %s encodes differently after the transform", pair[0].Name)
		}
	}
	for name, shared := range map[string]bool{
		"labels":            same(a.Labels, b.Labels),
		"annotations":       same(a.Annotations, b.Annotations),
		"finalizers":        same(a.Finalizers, b.Finalizers),
		"capacity":          same(a.Spec.Capacity, b.Spec.Capacity),
		"access modes":      same(a.Spec.AccessModes, b.Spec.AccessModes),
		"volume mode":       a.Spec.VolumeMode == b.Spec.VolumeMode,
		"volume attributes": same(a.Spec.CSI.VolumeAttributes, b.Spec.CSI.VolumeAttributes),
		"node names":        same(a.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values, b.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values),
	} {
		if !shared {
			t.Errorf("%s of two alike volumes are not shared", name)
		}
	}

	c, d := decoded(t, testClaim("c")), decoded(t, testClaim("d"))
	wantC := c.DeepCopy()
	s.Transform(c)
	s.Transform(d)
	if !reflect.DeepEqual(c, wantC) {
		t.Fatalf("a transform changed a claim:\n%v\n%v", c, wantC)
	}
	for name, shared := range map[string]bool{
		"requests":      same(c.Spec.Resources.Requests, d.Spec.Resources.Requests),
		"capacity":      same(c.Status.Capacity, d.Status.Capacity),
		"class":         c.Spec.StorageClassName == d.Spec.StorageClassName,
		"access modes":  same(c.Status.AccessModes, d.Status.AccessModes),
		"spec's modes":  same(c.Spec.AccessModes, d.Spec.AccessModes),
		"annotations":   same(c.Annotations, d.Annotations),
		"finalizers":    same(c.Finalizers, d.Finalizers),
		"capacity (PV)": same(c.Status.Capacity, a.Spec.Capacity),
	} {
		if !shared {
			t.Errorf("%s of two alike claims are not shared", name)
		}
	}
}

func TestTransformSharesOnlyEqualQuantities(t *testing.T) {
	s := New()
	parsed := decoded(t, testClaim("parsed"))
	s.Transform(parsed)
	// The same amount held another way (no cached string): equal by value, not to the last bit.
	built := testClaim("built")
	built.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: *resource.NewQuantity(1<<30, resource.BinarySI)}
	want := built.DeepCopy()
	s.Transform(built)
	if same(built.Spec.Resources.Requests, parsed.Spec.Resources.Requests) {
		t.Fatal("requests not equal to the last bit were shared")
	}
	if !reflect.DeepEqual(built, want) {
		t.Fatal("a transform changed requests it could not share")
	}
	other := decoded(t, testClaim("other"))
	other.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse("2Gi")}
	s.Transform(other)
	if other.Spec.Resources.Requests.Storage().String() != "2Gi" {
		t.Fatalf("a claim asking for 2Gi asks for %s after the transform", other.Spec.Resources.Requests.Storage())
	}
}

func TestSharedSlicesAreClipped(t *testing.T) {
	s := New()
	a, b := decoded(t, testVolume("a")), decoded(t, testVolume("b"))
	a.Spec.AccessModes = append(make([]v1.PersistentVolumeAccessMode, 0, 8), a.Spec.AccessModes...)
	s.Transform(a)
	s.Transform(b)
	grown := append(a.Spec.AccessModes, v1.ReadWriteMany)
	_ = append(b.Spec.AccessModes, v1.ReadWriteOncePod)
	if grown[2] != v1.ReadWriteMany || len(a.Spec.AccessModes) != 2 || len(b.Spec.AccessModes) != 2 {
		t.Fatalf("an append through one volume's access modes wrote into the other's: %v", grown)
	}
}

func TestTablesAreBounded(t *testing.T) {
	s := New()
	for i := 0; i < 3*maxShared; i++ {
		pv := testVolume(fmt.Sprint(i))
		pv.Labels = map[string]string{"index": fmt.Sprint(i)}
		s.Transform(pv)
		if n := len(s.stringMaps.byKey); n > maxShared {
			t.Fatalf("the table of maps holds %d values, want at most %d", n, maxShared)
		}
	}
	// Values seen once filled the table over and over; what later objects hold alike is still shared.
	a, b := testVolume("late-a"), testVolume("late-b")
	a.Labels, b.Labels = map[string]string{"index": "late"}, map[string]string{"index": "late"}
	s.Transform(a)
	s.Transform(b)
	if !same(a.Labels, b.Labels) || a.Labels["index"] != "late" {
		t.Fatal("two volumes with the same labels, seen after the table filled, do not share them")
	}
}

// TestTransformTwiceWritesNothing: a transform of an object readers already hold writes nothing
// (-race fails otherwise).
func TestTransformTwiceWritesNothing(t *testing.T) {
	s := New()
	pv, pvc := decoded(t, testVolume("a")), decoded(t, testClaim("a"))
	s.Transform(pv)
	s.Transform(pvc)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); _ = pv.DeepCopy(); _ = pvc.DeepCopy() }()
		go func() { defer wg.Done(); s.Transform(pv); s.Transform(pvc) }()
	}
	wg.Wait()
}

func TestTransformDropsManagedFieldsOfOtherObjects(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}}}
	if _, err := New().Transform(pod); err != nil || pod.ManagedFields != nil {
		t.Fatalf("pod's managedFields kept (err %v)", err)
	}
}

// BenchmarkTransform: what the transform adds to decoding a watch event's volume and claim.
func BenchmarkTransform(b *testing.B) {
	pv, pvc := testVolume("a"), testClaim("a")
	data, _ := pv.Marshal()
	claimData, _ := pvc.Marshal()
	for _, transform := range []bool{false, true} {
		b.Run(fmt.Sprintf("transform=%v", transform), func(b *testing.B) {
			s := New()
			b.ReportAllocs()
			for b.Loop() {
				v, c := &v1.PersistentVolume{}, &v1.PersistentVolumeClaim{}
				_ = v.Unmarshal(data)
				_ = c.Unmarshal(claimData)
				if transform {
					s.Transform(v)
					s.Transform(c)
				}
			}
		})
	}
}
