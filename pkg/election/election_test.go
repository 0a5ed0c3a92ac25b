package election

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
)

// candidate runs Run in the background and records when it leads.
type candidate struct {
	id      string
	cancel  context.CancelFunc
	done    chan error
	leading atomic.Bool
}

func startCandidate(t *testing.T, client *fake.Clientset, id string, active *atomic.Int32, maxActive *atomic.Int32, leadHook func(ctx context.Context)) *candidate {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	c := &candidate{id: id, cancel: cancel, done: make(chan error, 1)}
	cfg := Config{
		Client: client, Namespace: "kube-system", Name: "pv-controller-manager", Identity: id,
		// Long retry: only the release watch can explain a fast takeover.
		LeaseDuration: 60 * time.Second, RenewDeadline: 40 * time.Second, RetryPeriod: 20 * time.Second,
	}
	go func() {
		c.done <- Run(ctx, cfg, func(ctx context.Context) {
			n := active.Add(1)
			for {
				m := maxActive.Load()
				if n <= m || maxActive.CompareAndSwap(m, n) {
					break
				}
			}
			c.leading.Store(true)
			if leadHook != nil {
				leadHook(ctx)
			}
			<-ctx.Done()
			// Simulate in-flight writes finishing after the stop signal: the Lease must still be ours.
			time.Sleep(50 * time.Millisecond)
			c.leading.Store(false)
			active.Add(-1)
		})
	}()
	return c
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

func TestStandbyTakesOverAtOnceWhenLeaderStops(t *testing.T) {
	client := fake.NewClientset()
	var active, maxActive atomic.Int32

	a := startCandidate(t, client, "a", &active, &maxActive, nil)
	waitFor(t, 5*time.Second, "a to lead", a.leading.Load)
	b := startCandidate(t, client, "b", &active, &maxActive, nil)
	defer b.cancel()

	// b stands by while a holds the Lease.
	time.Sleep(200 * time.Millisecond) // a negative check: give b a chance to (wrongly) acquire
	if b.leading.Load() {
		t.Fatal("b leads while a holds the Lease")
	}

	stoppedAt := time.Now()
	a.cancel()
	if err := <-a.done; err != nil {
		t.Fatalf("a: graceful stop returned %v", err)
	}
	// RetryPeriod is 20s; without the release watch b would need 20-44 s.
	waitFor(t, 5*time.Second, "b to take over", b.leading.Load)
	t.Logf("takeover %s after a was told to stop", time.Since(stoppedAt))

	lease, err := client.CoordinationV1().Leases("kube-system").Get(context.Background(), "pv-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "b" {
		t.Fatalf("Lease holder = %v, want b", lease.Spec.HolderIdentity)
	}
	if got := maxActive.Load(); got != 1 {
		t.Fatalf("%d leaders were active at once", got)
	}
}

func TestLeaseReleasedOnlyAfterLeadReturns(t *testing.T) {
	client := fake.NewClientset()
	var active, maxActive atomic.Int32
	var mu sync.Mutex
	var holderWhenLeadReturned string
	a := startCandidate(t, client, "a", &active, &maxActive, func(ctx context.Context) {
		<-ctx.Done()
		lease, err := client.CoordinationV1().Leases("kube-system").Get(context.Background(), "pv-controller-manager", metav1.GetOptions{})
		if err == nil && lease.Spec.HolderIdentity != nil {
			mu.Lock()
			holderWhenLeadReturned = *lease.Spec.HolderIdentity
			mu.Unlock()
		}
	})
	waitFor(t, 5*time.Second, "a to lead", a.leading.Load)
	a.cancel()
	if err := <-a.done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if holderWhenLeadReturned != "a" {
		t.Fatalf("while lead was finishing the Lease holder was %q, want a", holderWhenLeadReturned)
	}
	lease, err := client.CoordinationV1().Leases("kube-system").Get(context.Background(), "pv-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" {
		t.Fatalf("Lease not released after shutdown, holder %q", *lease.Spec.HolderIdentity)
	}
}

func TestLosingTheLeaseIsAnError(t *testing.T) {
	client := fake.NewClientset()
	_, ctx := ktesting.NewTestContext(t)
	cfg := Config{
		Client: client, Namespace: "kube-system", Name: "pv-controller-manager", Identity: "a",
		LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond,
	}
	var failRenewals atomic.Bool
	client.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		// Only our renewals conflict. client-go's release on the way out (an empty holder) retries
		// conflicts until its context ends, which the fake client ignores: failing it too would
		// spin forever instead of modelling an apiserver.
		lease, _ := action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		renewal := lease != nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity == "a"
		if failRenewals.Load() && renewal {
			return true, nil, apierrors.NewConflict(coordinationv1.Resource("leases"), "pv-controller-manager", errors.New("taken"))
		}
		return false, nil, nil
	})
	leadCtxDone := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- Run(ctx, cfg, func(ctx context.Context) {
			// Another holder takes the Lease; from now on our renewals conflict.
			lease, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "pv-controller-manager", metav1.GetOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			intruder := "intruder"
			lease.Spec.HolderIdentity = &intruder
			if err := client.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), lease, "kube-system"); err != nil {
				t.Error(err)
			}
			failRenewals.Store(true)
			<-ctx.Done()
			close(leadCtxDone)
		})
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("Run returned %v, want ErrLeaseLost", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the Lease was taken")
	}
	select {
	case <-leadCtxDone:
	default:
		t.Fatal("Run returned before lead saw its context end")
	}
}
