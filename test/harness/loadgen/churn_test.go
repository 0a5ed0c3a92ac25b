package loadgen

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

// toyBinder binds every unbound claim of ns to the volume it is meant for in the churn: a setup
// claim to its -old volume, a new claim to the fresh one of its name. Polls until ctx is done.
func toyBinder(ctx context.Context, client kubernetes.Interface, ns string) {
	for ctx.Err() == nil {
		claims, _ := client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		for i := range claims.Items {
			c := &claims.Items[i]
			if c.Status.Phase == v1.ClaimBound {
				continue
			}
			if c.UID == "" { // the fake clientset assigns none
				c.UID = types.UID("uid-" + c.Name + "-" + c.ResourceVersion)
			}
			volume := c.Name
			if c.Labels[phaseLabel] == phaseSetup {
				volume += "-old"
			}
			pv, err := client.CoreV1().PersistentVolumes().Get(ctx, volume, metav1.GetOptions{})
			if err != nil {
				continue
			}
			pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: ns, Name: c.Name, UID: c.UID}
			pv.Status.Phase = v1.VolumeBound
			if _, err := client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
				continue
			}
			c.Spec.VolumeName = volume
			c.Status.Phase = v1.ClaimBound
			_, _ = client.CoreV1().PersistentVolumeClaims(ns).Update(ctx, c, metav1.UpdateOptions{})
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestChurnScenario runs the churn against a fake clientset and a toy binder: every claim is
// deleted and created again, every old volume deleted, each delete -> gone measured once, and the
// new claims' binds are the ones measured (not the setup's).
func TestChurnScenario(t *testing.T) {
	cfg := Config{Scenario: ScenarioChurn, Namespace: "ns", Prefix: "c", Count: 6, Concurrency: 3, Timeout: 30 * time.Second}
	client := fake.NewClientset()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go toyBinder(ctx, client, "ns")
	r, err := Run(ctx, client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Samples) != 6 || r.Unbound != 0 {
		t.Fatalf("%d claims measured Bound, %d unbound; want 6 and 0", len(r.Samples), r.Unbound)
	}
	for _, s := range r.Samples {
		if s.Latency <= 0 { // a setup claim's bind taken for the new claim's
			t.Errorf("claim %s: latency %s, want the new claim's create -> Bound", s.Claim, s.Latency)
		}
	}
	if len(r.ClaimDeleteToGone) != 6 || len(r.VolumeDeleteToGone) != 6 || r.ChurnLoop <= 0 {
		t.Fatalf("delete->gone: %d claims, %d volumes, loop %s; want 6, 6 and a loop", len(r.ClaimDeleteToGone), len(r.VolumeDeleteToGone), r.ChurnLoop)
	}
	if !strings.Contains(r.Summary(), "claim delete->gone") {
		t.Errorf("summary %q does not report delete->gone", r.Summary())
	}
	for _, s := range r.VolumeDeleteToGone {
		if !strings.HasSuffix(s.Claim, "-old") {
			t.Errorf("volume %s deleted; only old volumes should be", s.Claim)
		}
	}
	if err := Verify(ctx, client, cfg); err != nil {
		t.Fatalf("verify: %v", err)
	}
	pvs, _ := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if len(pvs.Items) != 6 {
		t.Errorf("%d volumes left, want the 6 fresh ones", len(pvs.Items))
	}
}

// TestChurnCheckBind: a new claim on the old volume of its name is a wrong bind.
func TestChurnCheckBind(t *testing.T) {
	cfg := Config{Scenario: ScenarioChurn, Namespace: "ns", Prefix: "c"}
	claim := cfg.Claim(2)
	claim.Spec.VolumeName = cfg.oldVolumeName(2)
	if problem := (churn{}).CheckBind(&cfg, claim); !strings.Contains(problem, "deleted claim") {
		t.Errorf("claim on its old volume: %q, want a problem", problem)
	}
	claim.Spec.VolumeName = cfg.name(5)
	if problem := (churn{}).CheckBind(&cfg, claim); problem != "" {
		t.Errorf("claim on a fresh volume: %q, want none", problem)
	}
}
