package torture

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func choiceVolume(name, size string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes: modes,
		},
	}
}

// upstreamChoice follows FindMatchingVolume: the group of the fewest access modes with a fit
// first, then the smallest volume in it; ties make the choice depend on cache order.
func TestUpstreamChoice(t *testing.T) {
	rwo, rox, rwx := v1.ReadWriteOnce, v1.ReadOnlyMany, v1.ReadWriteMany
	tests := []struct {
		name       string
		fits       []*v1.PersistentVolume
		want       string
		wantUnique bool
	}{
		{"none", nil, "", false},
		{"smallest of one group", []*v1.PersistentVolume{choiceVolume("a", "5Gi", rwo), choiceVolume("b", "2Gi", rwo)}, "b", true},
		{"two of the smallest size", []*v1.PersistentVolume{choiceVolume("a", "2Gi", rwo), choiceVolume("b", "2Gi", rwo)}, "a", false},
		{"the group of fewer modes wins over a smaller volume", []*v1.PersistentVolume{choiceVolume("a", "5Gi", rwo), choiceVolume("b", "1Gi", rwo, rox)}, "a", true},
		{"two groups of as many modes", []*v1.PersistentVolume{choiceVolume("a", "5Gi", rwo, rox), choiceVolume("b", "1Gi", rwo, rwx)}, "", false},
	}
	for _, tc := range tests {
		best, unique := upstreamChoice(tc.fits)
		got := ""
		if best != nil {
			got = best.Name
		}
		if unique != tc.wantUnique || tc.wantUnique && got != tc.want {
			t.Errorf("%s: got %q unique %t, want %q unique %t", tc.name, got, unique, tc.want, tc.wantUnique)
		}
	}
}

// Seed 562 (2026-12-04): ours gave a RWO claim a new 5Gi RWO volume still Pending (its offer,
// patch 0017) while a 2Gi RWO+ROX volume was Available. Upstream's rules rank the group of fewer
// modes first: that volume, once Available, would be upstream's pick too. Not worse.
func TestUpstreamOrderRanksFewerModesFirst(t *testing.T) {
	rwo, rox := v1.ReadWriteOnce, v1.ReadOnlyMany
	offered, available := choiceVolume("pv-26", "5Gi", rwo), choiceVolume("pv-12", "2Gi", rwo, rox)
	if upstreamOrder(offered, available) >= 0 {
		t.Errorf("a RWO volume of 5Gi should rank before a RWO+ROX volume of 2Gi")
	}
	if upstreamOrder(choiceVolume("a", "5Gi", rwo), choiceVolume("b", "2Gi", rwo)) <= 0 {
		t.Errorf("in one group the smaller ranks first")
	}
}
