package upstreamguard

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

const (
	rolled   = "*,bootstrapsigner,tokencleaner,-persistentvolume-binder-controller"
	unrolled = "*,bootstrapsigner,tokencleaner"
)

func kcmOn(node, controllers string) *corev1.Pod {
	p := kcmPod("kube-controller-manager-"+node, controllers)
	p.Spec.NodeName = node
	return p
}

func kcmLease(holder string, renewed time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: DefaultLeaseName, Namespace: DefaultNamespace},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(holder),
			LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime:            &metav1.MicroTime{Time: renewed},
		},
	}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Spec.NodeName)
	}
	return out
}

// Each step of a rollout node by node on three control-plane nodes, and the Lease states around it.
func TestBinderPodsFollowKCMLease(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	fresh := now.Add(-2 * time.Second)
	stale := now.Add(-20 * time.Second)
	for _, tc := range []struct {
		name       string
		pods       []*corev1.Pod
		lease      *coordinationv1.Lease
		observed   time.Time
		want       []string
		wantLeader string
	}{
		{"none rolled, cp1 leads: KCM binds", []*corev1.Pod{kcmOn("cp1", unrolled), kcmOn("cp2", unrolled), kcmOn("cp3", unrolled)},
			kcmLease("cp1_0c9f", fresh), time.Time{}, []string{"cp1"}, "cp1_0c9f"},
		{"cp1 rolled and leads: nobody else binds, so we do", []*corev1.Pod{kcmOn("cp1", rolled), kcmOn("cp2", unrolled), kcmOn("cp3", unrolled)},
			kcmLease("cp1_0c9f", fresh), time.Time{}, nil, "cp1_0c9f"},
		{"cp1 rolled, cp2 took the Lease: KCM binds again", []*corev1.Pod{kcmOn("cp1", rolled), kcmOn("cp2", unrolled), kcmOn("cp3", unrolled)},
			kcmLease("cp2_77aa", fresh), time.Time{}, []string{"cp2"}, "cp2_77aa"},
		{"holder's hostname in capitals", []*corev1.Pod{kcmOn("cp1", rolled), kcmOn("cp2", unrolled)},
			kcmLease("CP1_0c9f", fresh), time.Time{}, nil, "CP1_0c9f"},
		{"all rolled", []*corev1.Pod{kcmOn("cp1", rolled), kcmOn("cp2", rolled), kcmOn("cp3", rolled)},
			kcmLease("cp3_1234", fresh), time.Time{}, nil, "cp3_1234"},
		{"Lease expired: any standby may take it, all binder pods count", []*corev1.Pod{kcmOn("cp1", rolled), kcmOn("cp2", unrolled), kcmOn("cp3", unrolled)},
			kcmLease("cp1_0c9f", stale), time.Time{}, []string{"cp2", "cp3"}, ""},
		{"Lease renewed by a holder whose clock is behind, seen just now: live", []*corev1.Pod{kcmOn("cp1", rolled), kcmOn("cp2", unrolled)},
			kcmLease("cp1_0c9f", stale), now.Add(-time.Second), nil, "cp1_0c9f"},
		{"no Lease (KCM without leader election): every binder pod", []*corev1.Pod{kcmOn("cp1", rolled), kcmOn("cp2", unrolled)},
			nil, time.Time{}, []string{"cp2"}, ""},
		{"holder not a pod here: every binder pod", []*corev1.Pod{kcmOn("cp1", rolled), kcmOn("cp2", unrolled)},
			kcmLease("elsewhere_1", fresh), time.Time{}, []string{"cp2"}, ""},
		{"holder's pod is being deleted: every binder pod", []*corev1.Pod{
			func() *corev1.Pod { p := kcmOn("cp1", rolled); p.DeletionTimestamp = &metav1.Time{Time: now}; return p }(),
			kcmOn("cp2", unrolled)},
			kcmLease("cp1_0c9f", fresh), time.Time{}, []string{"cp2"}, ""},
		{"empty holder (released): every binder pod", []*corev1.Pod{kcmOn("cp1", rolled), kcmOn("cp2", unrolled)},
			kcmLease("", fresh), time.Time{}, []string{"cp2"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			active, leader := binderPods(tc.pods, tc.lease, now, tc.observed)
			if got := names(active); !slices.Equal(got, tc.want) || leader != tc.wantLeader {
				t.Fatalf("binderPods = %v, leader %q; want %v, leader %q", got, leader, tc.want, tc.wantLeader)
			}
		})
	}
}

// The guard end to end on a fake API: writes flow while a rolled KCM leads, stop the moment an
// unrolled one takes the Lease, and resume when the Lease goes back.
func TestGuardFollowsLeaseTransitions(t *testing.T) {
	clock := time.Now()
	h := startWith(t, Config{LeaseName: DefaultLeaseName},
		kcmOn("cp1", rolled), kcmOn("cp2", unrolled), kcmOn("cp3", unrolled))
	ctx := context.Background()
	leases := h.client.CoordinationV1().Leases(DefaultNamespace)
	if _, err := leases.Create(ctx, kcmLease("cp1_a", clock), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "cp1 (rolled) leads", func(active []string) bool { return len(active) == 0 && h.leader() == "cp1_a" })
	if err := h.do(ctx, http.MethodPost); err != nil {
		t.Fatalf("write while a rolled KCM leads: %v", err)
	}

	if _, err := leases.Update(ctx, kcmLease("cp2_b", time.Now()), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "cp2 (binder on) leads", func(active []string) bool {
		return slices.Equal(active, []string{"kube-system/kube-controller-manager-cp2"})
	})
	h.expectHeld(t)

	// A write waiting while cp2 leads goes through when a rolled KCM takes the Lease back.
	h.expectReleasedBy(t, "a rolled KCM took the Lease", func() {
		if _, err := leases.Update(ctx, kcmLease("cp1_c", time.Now()), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

// No event marks a Lease's expiry: the guard must look again by itself, and then hold for the
// standbys that may take over.
func TestGuardHoldsWhenTheLeaderLeaseExpires(t *testing.T) {
	// The Lease ages on a fake clock only: it stays live however slowly the guard runs, and
	// expires when the test steps past it.
	clock := testingclock.NewFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	h := startWith(t, Config{LeaseName: DefaultLeaseName, clock: clock}, kcmOn("cp1", rolled), kcmOn("cp2", unrolled))
	l := kcmLease("cp1_a", clock.Now())
	if _, err := h.client.CoordinationV1().Leases(DefaultNamespace).Create(context.Background(), l, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "cp1 (rolled) leads", func(active []string) bool { return len(active) == 0 && h.leader() == "cp1_a" })
	// The guard set its re-check with the leader (same lock): due a second after the expiry.
	if !clock.HasWaiters() {
		t.Fatal("no re-check scheduled for the Lease's expiry")
	}
	clock.Step(time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second + time.Second)
	h.waitFor(t, "the Lease expired: cp2 may take over", func(active []string) bool {
		return slices.Equal(active, []string{"kube-system/kube-controller-manager-cp2"})
	})
	h.expectHeld(t)
}

func (h *harness) leader() string {
	h.guard.mu.Lock()
	defer h.guard.mu.Unlock()
	return h.guard.leader
}
