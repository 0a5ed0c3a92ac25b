package e2e

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An upgrade of our binder as an operator does it (docs/operators/rollout.md, "Upgrading"): the
// static pod's image changed node by node with pv-rollout enable --image, pairs created all the
// while; then the same back to the first image. make e2e-kind builds the "next" image from the
// same commit with another version stamp (no registry here holds an older release), so this
// checks the mechanics of an upgrade, not a change of behaviour between versions.
var _ = Describe("kind: upgrade node by node, then roll back", Ordered, Serial, Label("kind", "kind-upgrade"), func() {
	var e kindEnv
	BeforeAll(func() { e = kindSetup() })

	It("moves every node to the next image and back; pairs created throughout all bind one to one; the time without a leader is measured", func(ctx SpecContext) {
		next := os.Getenv("E2E_KIND_NEXT_IMAGE")
		if next == "" {
			Skip("set E2E_KIND_NEXT_IMAGE to the image to upgrade to")
		}
		ns := newNamespace(ctx)
		feeder := startPairFeeder(ctx, ns, 500*time.Millisecond)
		defer feeder.Stop()
		leaderless := watchLeaderless(ctx)
		for _, step := range []struct{ name, image string }{{"upgrade", next}, {"rollback", e.image}} {
			stepStart := time.Now()
			for _, node := range e.controlPlanes {
				GinkgoWriter.Printf("%s, %s: %s", step.name, node, e.onNode(ctx, node, "/usr/local/bin/pv-rollout", "enable", "--image", step.image))
				Eventually(ctx, func() (string, error) {
					pod, err := staticPod(ctx, "pv-controller-manager", node, true)()
					if err != nil {
						return "", err
					}
					return pod.Spec.Containers[0].Image, nil
				}).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(Equal(step.image), "%s: our pod on %s", step.name, node)
			}
			switched := time.Now()
			Eventually(ctx, func() int { return feeder.createdSince(switched) }).WithTimeout(time.Minute).Should(BeNumerically(">=", 10))
			n, _ := feeder.waitAllBound(ctx, 60*time.Second)
			AddReportEntry(step.name, fmt.Sprintf("%d pairs so far all Bound; slowest bind during the %s %s",
				n, step.name, feeder.slowestSince(stepStart).Round(10*time.Millisecond)))
		}
		feeder.Stop()
		n, slowest := feeder.waitAllBound(ctx, 60*time.Second)
		Expect(expectOneToOne(ctx, ns)).To(Equal(n))
		longest, total := leaderless()
		AddReportEntry("upgrade and rollback", fmt.Sprintf(
			"%d pairs, all Bound one to one; slowest bind %s; without a leader (Lease free or expired): longest %s, %s in all over 6 pod restarts",
			n, slowest.Round(10*time.Millisecond), longest.Round(10*time.Millisecond), total.Round(10*time.Millisecond)))
	})
})

// watchLeaderless polls our Lease every 100 ms until ctx ends or the returned function is called,
// which returns the longest and the total time nobody held it (no holder, or its renewal older
// than the lease duration: a leader that died without releasing).
func watchLeaderless(ctx context.Context) func() (longest, total time.Duration) {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var longest, total time.Duration
	var since time.Time // start of the current leaderless interval; zero while someone leads
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(100 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-ticker.C:
				lease, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "pv-controller-manager", metav1.GetOptions{})
				if err != nil {
					continue // an apiserver restarting is not a verdict on the binder
				}
				free := lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == ""
				if !free && lease.Spec.RenewTime != nil && lease.Spec.LeaseDurationSeconds != nil {
					free = now.Sub(lease.Spec.RenewTime.Time) > time.Duration(*lease.Spec.LeaseDurationSeconds)*time.Second
				}
				mu.Lock()
				switch {
				case free && since.IsZero():
					since = now
				case !free && !since.IsZero():
					gap := now.Sub(since)
					longest, total, since = max(longest, gap), total+gap, time.Time{}
				}
				mu.Unlock()
			}
		}
	}()
	return func() (time.Duration, time.Duration) {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		if !since.IsZero() {
			gap := time.Since(since)
			longest, total = max(longest, gap), total+gap
		}
		return longest, total
	}
}
