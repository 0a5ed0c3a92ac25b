package loadgen

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// Each order is a scenario of its own name that creates both objects of a pair, in that order; a
// claim's clock starts before its create call. Config.Order names the same scenarios.
func TestCreatePairOrders(t *testing.T) {
	for _, tc := range []struct {
		scenario, order string
		want            []string // resources in create order; nil: any order
	}{
		{ScenarioPrebound, "", []string{"persistentvolumes", "persistentvolumeclaims"}},
		{ScenarioPrebound, OrderPVFirst, []string{"persistentvolumes", "persistentvolumeclaims"}},
		{ScenarioPrebound, OrderClaimFirst, []string{"persistentvolumeclaims", "persistentvolumes"}},
		{"prebound-claim-first", "", []string{"persistentvolumeclaims", "persistentvolumes"}},
		{ScenarioPrebound, OrderTogether, nil},
		{"claimref-together", "", nil},
	} {
		t.Run(tc.scenario+"/"+tc.order, func(t *testing.T) {
			cfg := Config{Scenario: tc.scenario, Namespace: "ns", Prefix: "p", Count: 1, Concurrency: 1, Order: tc.order}
			client := fake.NewClientset()
			var created []string
			var claimCreatedAt time.Time
			var lock = make(chan struct{}, 1)
			client.PrependReactor("create", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
				lock <- struct{}{}
				created = append(created, action.GetResource().Resource)
				if action.GetResource().Resource == "persistentvolumeclaims" {
					claimCreatedAt = time.Now()
				}
				<-lock
				return false, nil, nil
			})
			scenario, err := cfg.scenario()
			if err != nil {
				t.Fatal(err)
			}
			env := &Env{Client: client, Config: &cfg, Watch: context.Background(), tracker: newBindTracker(1)}
			if _, err := scenario.Create(context.Background(), env); err != nil {
				t.Fatal(err)
			}
			if len(created) != 2 || (tc.want != nil && (created[0] != tc.want[0] || created[1] != tc.want[1])) {
				t.Errorf("created %v, want %v", created, tc.want)
			}
			if start := env.tracker.startedCopy()[cfg.name(1)]; start.IsZero() || start.After(claimCreatedAt) {
				t.Errorf("clock started at %v, after the claim's create at %v", start, claimCreatedAt)
			}
			if claim := cfg.Claim(1); (claim.Spec.VolumeName == cfg.name(1)) != strings.HasPrefix(tc.scenario, ScenarioPrebound) {
				t.Errorf("claim names volume %q: only prebound claims name theirs", claim.Spec.VolumeName)
			}
		})
	}
}

func TestRunRejectsBadOrder(t *testing.T) {
	for _, cfg := range []Config{
		{Scenario: ScenarioPrebound, Order: "sideways"},
		{Scenario: ScenarioMatched, Order: OrderClaimFirst},
	} {
		cfg.Namespace, cfg.Prefix, cfg.Count, cfg.Concurrency = "ns", "p", 1, 1
		if _, err := Run(context.Background(), fake.NewClientset(), cfg); err == nil || !strings.Contains(err.Error(), "order") {
			t.Errorf("%s with order %q: error %v, want one about the order", cfg.Scenario, cfg.Order, err)
		}
	}
}
