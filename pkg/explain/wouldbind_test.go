package explain

import (
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// WouldBind must say yes exactly for the claims Explain calls BindPending, and name the same
// volume, over random snapshots: claims of several shapes (many sharing one, which WouldBind
// matches once), pre-bound by volumeName or reserved by a claimRef with and without UID, of an
// Immediate and a WaitForFirstConsumer class, some already bound by annotation; volumes of every
// phase. It also runs over the recorded dump.
func TestWouldBindAgreesWithExplain(t *testing.T) {
	check := func(t *testing.T, s *Snapshot) (yes int) {
		explainer, asker := NewAnalyzer(s), NewAnalyzer(s)
		for _, claim := range s.Claims {
			report := explainer.Explain(claim)
			volume, ok := asker.WouldBind(claim)
			if ok != (report.Verdict == BindPending) || (ok && volume != report.Volume) {
				t.Fatalf("claim %s/%s: WouldBind = %q, %v; Explain = %s %q (%s)", claim.Namespace, claim.Name, volume, ok, report.Verdict, report.Volume, report.Summary)
			}
			if ok {
				yes++
			}
		}
		return yes
	}
	if yes := check(t, loadDump(t)); yes == 0 {
		t.Error("the dump has no BindPending claim")
	}

	rng := rand.New(rand.NewSource(1))
	pick := func(options ...string) string { return options[rng.Intn(len(options))] }
	immediate, wffc := storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer
	classes := []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "gold"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &immediate},
		{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc},
	}
	var yes, total int
	for round := 0; round < 300; round++ {
		s := &Snapshot{Classes: classes}
		for i := 0; i < 12; i++ {
			name := fmt.Sprintf("c%d", i)
			claim := &v1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
				Spec: v1.PersistentVolumeClaimSpec{
					AccessModes:      []v1.PersistentVolumeAccessMode{v1.PersistentVolumeAccessMode(pick("ReadWriteOnce", "ReadWriteOnce", "ReadWriteMany"))},
					Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(pick("1Gi", "2Gi"))}},
					StorageClassName: ptr.To(pick("", "gold", "gold", "local")),
				},
				Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
			}
			switch rng.Intn(6) {
			case 0:
				claim.Spec.VolumeName = fmt.Sprintf("pv%d", rng.Intn(14))
			case 1:
				claim.Spec.VolumeName = fmt.Sprintf("pv%d", rng.Intn(14))
				metav1.SetMetaDataAnnotation(&claim.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
			}
			if rng.Intn(5) == 0 {
				claim.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": pick("fast", "slow")}}
			}
			s.Claims = append(s.Claims, claim)
		}
		for i := 0; i < 12; i++ {
			pv := &v1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv%d", i), Labels: map[string]string{"tier": pick("fast", "slow")}},
				Spec: v1.PersistentVolumeSpec{
					Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse(pick("1Gi", "2Gi", "5Gi"))},
					AccessModes:            []v1.PersistentVolumeAccessMode{v1.PersistentVolumeAccessMode(pick("ReadWriteOnce", "ReadWriteMany"))},
					StorageClassName:       pick("", "gold", "local"),
					PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp"}},
				},
				Status: v1.PersistentVolumeStatus{Phase: v1.PersistentVolumePhase(pick("Available", "Available", "Bound", "Released"))},
			}
			if rng.Intn(3) == 0 {
				c := rng.Intn(14)
				pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: fmt.Sprintf("c%d", c), UID: types.UID(pick("", fmt.Sprintf("uid-c%d", c), "uid-old"))}
			}
			s.Volumes = append(s.Volumes, pv)
		}
		yes += check(t, s)
		total += len(s.Claims)
	}
	if yes < total/20 {
		t.Errorf("only %d of %d random claims would bind: the generator is too narrow", yes, total)
	}
}
