package app

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/fastpv/pv-controller-manager/pkg/upstreamguard"
)

// Without leader election the process binds at once: /readyz must wait for its caches as it does
// for a leader's (found by make bench-scale: ready 0.8 s after start on 200 000 objects).
func TestReadyzWaitsForCachesWithoutLeaderElection(t *testing.T) {
	state := &binderState{}
	if err := state.cachesSynced(); err != nil {
		t.Fatalf("a standby (not binding) is not ready: %v", err)
	}
	state.runUnelected(context.Background(), func(context.Context) {
		if state.cachesSynced() == nil {
			t.Error("ready while binding without leader election and before the caches synced")
		}
		state.synced.Store(true)
		if err := state.cachesSynced(); err != nil {
			t.Errorf("not ready after the caches synced: %v", err)
		}
	})
	if state.leading.Load() {
		t.Error("still leading after the binder returned")
	}
}

// A warm standby is ready once the caches it would bind from have synced: deploy/rollout.sh enable
// waits for that (a replica whose identity cannot list volumes never is).
func TestReadyzWaitsForWarmStandbyCaches(t *testing.T) {
	state := &binderState{warm: true}
	if state.cachesSynced() == nil {
		t.Fatal("a warm standby is ready before its caches synced")
	}
	state.warmSynced.Store(true)
	if err := state.cachesSynced(); err != nil {
		t.Fatalf("a warm standby whose caches synced is not ready: %v", err)
	}
}

// "api-access" fails until the guard has listed KCM's pods with this replica's identity, and
// passes once it has.
func TestReadyzAPIAccess(t *testing.T) {
	guard := upstreamguard.New(upstreamguard.Config{Client: fake.NewClientset(), Namespace: "kube-system", Selector: labels.Everything(), CheckPeriod: time.Minute})
	check := apiAccessCheck(guard)
	if check(nil) == nil {
		t.Fatal("api-access passes before anything was listed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go guard.Run(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for check(nil) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("api-access still failing after the guard's first look: %v", check(nil))
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
}
