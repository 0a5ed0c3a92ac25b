package loadgen

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// The resident population looks as a binder leaves it: both sides Bound and naming each other, the
// claim's bind-completed annotation and status as the binder writes them; and one free Available PV
// per ten pairs, of a class no claim asks for.
func TestResidentWritesSettledPairsAndFreeVolumes(t *testing.T) {
	cfg := Config{Scenario: ScenarioResident, Namespace: "ns", Prefix: "r", Count: 20, Concurrency: 4}
	client := fake.NewClientset()
	scenario, err := cfg.scenario()
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Client: client, Config: &cfg, Watch: context.Background(), tracker: newBindTracker(cfg.Count)}
	if _, err := scenario.Create(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := Verify(ctx, client, cfg); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	claims, _ := client.CoreV1().PersistentVolumeClaims("ns").List(ctx, metav1.ListOptions{})
	for _, c := range claims.Items {
		if c.Status.Phase != v1.ClaimBound || c.Annotations[storagehelpers.AnnBindCompleted] != "yes" ||
			!c.Status.Capacity.Storage().Equal(*c.Spec.Resources.Requests.Storage()) || len(c.Status.AccessModes) != 1 {
			t.Errorf("claim %s is not as a binder leaves it: %+v, annotations %v", c.Name, c.Status, c.Annotations)
		}
	}
	volumes, _ := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	bound, free := 0, 0
	for _, pv := range volumes.Items {
		switch {
		case pv.Spec.StorageClassName == ResidentFreeClass && pv.Spec.ClaimRef == nil && pv.Status.Phase == v1.VolumeAvailable:
			free++
		case pv.Spec.ClaimRef != nil && pv.Status.Phase == v1.VolumeBound:
			bound++
		default:
			t.Errorf("volume %s: class %q, claimRef %v, phase %s", pv.Name, pv.Spec.StorageClassName, pv.Spec.ClaimRef, pv.Status.Phase)
		}
	}
	if bound != 20 || free != 2 {
		t.Errorf("%d bound and %d free volumes, want 20 and 2", bound, free)
	}
	if got := scenario.WritesAfterStart(20); got != 4*20+2*2 {
		t.Errorf("WritesAfterStart(20) = %d", got)
	}
}
