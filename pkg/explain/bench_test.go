package explain

import (
	"bytes"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// largeSnapshot is a cluster of 10 000 claims and 10 000 PVs in one class: 8000 bound pairs,
// 1000 claims pre-bound to PVs that do not exist, and 1000 claims without volumeName that no
// PV fits, facing 2000 unclaimed PVs that are all too small (the worst case for candidates:
// every one of them is a candidate of every one of those claims).
func largeSnapshot() *Snapshot {
	s := &Snapshot{HaveLeases: true}
	mode := storagev1.VolumeBindingImmediate
	s.Classes = append(s.Classes, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "manual"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &mode})
	pv := func(name, size string) *v1.PersistentVolume {
		return &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Spec: v1.PersistentVolumeSpec{
				Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				StorageClassName: "manual",
				PersistentVolumeSource: v1.PersistentVolumeSource{
					HostPath: &v1.HostPathVolumeSource{Path: "/tmp/" + name},
				},
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
		}
	}
	claim := func(i int, size, volume string) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", i%100), Name: fmt.Sprintf("claim-%d", i), UID: types.UID(fmt.Sprintf("uid-claim-%d", i))},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
				StorageClassName: ptr.To("manual"),
				VolumeName:       volume,
			},
			Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
		}
	}
	for i := 0; i < 10000; i++ {
		switch {
		case i < 8000:
			c := claim(i, "1Gi", fmt.Sprintf("pv-%d", i))
			c.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
			c.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound, Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}
			p := pv(fmt.Sprintf("pv-%d", i), "1Gi")
			p.Spec.ClaimRef = &v1.ObjectReference{Namespace: c.Namespace, Name: c.Name, UID: c.UID}
			p.Status.Phase = v1.VolumeBound
			s.Claims, s.Volumes = append(s.Claims, c), append(s.Volumes, p)
		case i < 9000:
			s.Claims = append(s.Claims, claim(i, "1Gi", fmt.Sprintf("pv-missing-%d", i)))
		default:
			s.Claims = append(s.Claims, claim(i, "100Gi", ""))
		}
	}
	for i := 0; i < 2000; i++ {
		s.Volumes = append(s.Volumes, pv(fmt.Sprintf("pv-small-%d", i), fmt.Sprintf("%dMi", 1+i)))
	}
	return s
}

// BenchmarkExplainAllNamespaces10000 is `kubectl pvc-why -A` on 10 000 claims and 10 000 PVs,
// once the objects are read: indexing plus one explanation per claim.
func BenchmarkExplainAllNamespaces10000(b *testing.B) {
	s := largeSnapshot()
	b.ResetTimer()
	for b.Loop() {
		reports := NewAnalyzer(s).ExplainAll(true)
		if len(reports) != 2000 {
			b.Fatalf("%d reports, want the 2000 claims that are not Bound", len(reports))
		}
	}
}

// BenchmarkFromFile10000 adds reading the same objects from a YAML dump (--from-file).
func BenchmarkFromFile10000(b *testing.B) {
	s := largeSnapshot()
	list := v1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	add := func(obj any, kind, apiVersion string) {
		data, err := yaml.Marshal(obj)
		if err != nil {
			b.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
		m["kind"], m["apiVersion"] = kind, apiVersion
		raw, err := yaml.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			b.Fatal(err)
		}
		list.Items = append(list.Items, runtimeRaw(js))
	}
	for _, c := range s.Claims {
		add(c, "PersistentVolumeClaim", "v1")
	}
	for _, p := range s.Volumes {
		add(p, "PersistentVolume", "v1")
	}
	for _, c := range s.Classes {
		add(c, "StorageClass", "storage.k8s.io/v1")
	}
	dump, err := yaml.Marshal(list)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(dump))/1e6, "MB")
	b.ResetTimer()
	for b.Loop() {
		snapshot, err := LoadFromFile(bytes.NewReader(dump))
		if err != nil {
			b.Fatal(err)
		}
		if len(snapshot.Claims) != 10000 || len(snapshot.Volumes) != 10000 {
			b.Fatalf("read %d claims and %d PVs, want 10000 each", len(snapshot.Claims), len(snapshot.Volumes))
		}
		if reports := NewAnalyzer(snapshot).ExplainAll(true); len(reports) != 2000 {
			b.Fatalf("%d reports, want 2000", len(reports))
		}
	}
}

func runtimeRaw(js []byte) runtime.RawExtension { return runtime.RawExtension{Raw: js} }
