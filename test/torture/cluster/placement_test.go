package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// A WaitForFirstConsumer claim Pending with its pod unplaced while a free volume of its class fits
// it: the cluster stopped placing pods (the 30-minute run of 2026-12-04, whose kube-scheduler
// exited after 2 minutes). A placed pod, a volume that does not fit or is taken, or a claim of
// another class is not such a finding.
func TestUnplacedFindsAWaitForFirstConsumerPodNobodyPlaced(t *testing.T) {
	cl := runClasses("ou1")
	claim := func() *v1.PersistentVolumeClaim {
		c := testClaim("wffc-1", "uid-1", "", v1.ClaimPending)
		c.Spec.StorageClassName = ptr.To(cl.wffc)
		c.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
		return c
	}
	volume := func(size string) *v1.PersistentVolume {
		v := testVolume("wffc-2", "", "", v1.VolumeAvailable)
		v.Spec.StorageClassName = cl.wffc
		v.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
		v.Spec.Capacity[v1.ResourceStorage] = resource.MustParse(size)
		v.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{"kwok-node-0"}}},
		}}}}
		return v
	}
	node := func(allowed string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-node-0"},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse(allowed)}}}
	}
	other := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "kube-system"}, Spec: v1.PodSpec{NodeName: "kwok-node-0"}}
	pod := func(node string) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: claim().ObjectMeta,
			Spec: v1.PodSpec{NodeName: node, Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "wffc-1"}}}}},
		}
	}
	tests := []struct {
		name    string
		objects []runtime.Object
		want    bool
	}{
		{"unplaced while a volume fits", []runtime.Object{claim(), volume("1Gi"), pod(""), node("110"), other}, true},
		{"the volume's node is full", []runtime.Object{claim(), volume("1Gi"), pod(""), node("1"), other}, false},
		{"the claim names another volume", []runtime.Object{func() *v1.PersistentVolumeClaim { c := claim(); c.Spec.VolumeName = "wffc-9"; return c }(), volume("1Gi"), pod("")}, false},
		{"placed", []runtime.Object{claim(), volume("1Gi"), pod("kwok-node-0")}, false},
		{"the free volume is too small", []runtime.Object{claim(), volume("500Mi"), pod("")}, false},
		{"another class", []runtime.Object{func() *v1.PersistentVolumeClaim { c := claim(); c.Spec.StorageClassName = ptr.To(cl.static); return c }(), volume("1Gi"), pod("")}, false},
		{"no pod uses it", []runtime.Object{claim(), volume("1Gi")}, false},
	}
	for _, tc := range tests {
		got, err := unplaced(context.Background(), fake.NewClientset(tc.objects...), "t", cl)
		if err != nil {
			t.Fatal(err)
		}
		if (len(got) > 0) != tc.want {
			t.Errorf("%s: got %v, want a finding: %t", tc.name, got, tc.want)
		}
		if tc.want && len(got) > 0 && !strings.Contains(got[0], "wffc-2") {
			t.Errorf("%s: %q should name the volume that fits", tc.name, got[0])
		}
	}
}

// running reads a pid file: this process runs; a pid that is gone does not.
func TestRunningReadsThePidFile(t *testing.T) {
	dir := t.TempDir()
	self, gone := filepath.Join(dir, "self.pid"), filepath.Join(dir, "gone.pid")
	if err := os.WriteFile(self, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gone, []byte("999999999"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !running(self) {
		t.Errorf("this process should read as running")
	}
	if running(gone) || running(filepath.Join(dir, "missing.pid")) {
		t.Errorf("a gone pid or a missing pid file should not read as running")
	}
}
