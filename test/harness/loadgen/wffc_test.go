package loadgen

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestWFFCScenarioObjects(t *testing.T) {
	cfg := Config{Scenario: ScenarioWFFC, Namespace: "ns", Prefix: "w"}
	node := func(name string, taint string, unschedulable bool) *v1.Node {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
			Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}
		n.Spec.Unschedulable = unschedulable
		if taint != "" {
			n.Spec.Taints = []v1.Taint{{Key: taint, Effect: v1.TaintEffectNoSchedule}}
		}
		return n
	}
	notReady := node("kwok-2", "", false)
	notReady.Status.Conditions[0].Status = v1.ConditionFalse
	client := fake.NewClientset(node("kwok-1", "kwok.x-k8s.io/node", false), node("cp", "node-role.kubernetes.io/control-plane", false),
		node("cordoned", "", true), node("kwok-0", "", false), notReady)
	hosts, err := schedulableHostnames(context.Background(), client, 2)
	if err != nil || strings.Join(hosts, ",") != "kwok-0,kwok-1" {
		t.Fatalf("schedulable hostnames %v, %v; want kwok-0,kwok-1", hosts, err)
	}
	pv := cfg.LocalVolume(1, "kwok-1")
	terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
	if pv.Spec.Local == nil || pv.Spec.StorageClassName != cfg.LocalClassName() || len(terms) != 1 ||
		terms[0].MatchExpressions[0].Values[0] != "kwok-1" || terms[0].MatchExpressions[0].Key != v1.LabelHostname {
		t.Fatalf("local volume %+v: want a local PV of the class with affinity to kwok-1", pv.Spec)
	}
	claim := cfg.Claim(1)
	if claim.Spec.VolumeName != "" || *claim.Spec.StorageClassName != cfg.LocalClassName() {
		t.Fatalf("claim: volumeName %q class %q; want none and the WaitForFirstConsumer class", claim.Spec.VolumeName, *claim.Spec.StorageClassName)
	}
	if mode := cfg.LocalStorageClass().VolumeBindingMode; mode == nil || *mode != "WaitForFirstConsumer" {
		t.Fatalf("class binding mode %v", mode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := schedulableHostnames(ctx, fake.NewClientset(node("cp", "node-role.kubernetes.io/control-plane", false)), 0); err == nil {
		t.Fatal("no schedulable node: want an error saying so")
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := schedulableHostnames(ctx, client, 3); err == nil || !strings.Contains(err.Error(), "needs 3") {
		t.Fatalf("2 schedulable nodes of 3 wanted: error %v, want one saying 3 are needed", err)
	}
}
