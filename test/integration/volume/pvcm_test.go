package volume

// pv-controller-manager's own integration cases, beside upstream's, for what our patches add:
// a PV that arrives after its pre-bound claim, and a storm of 409s from a competing writer.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics/testutil"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/test/integration/framework"

	persistentvolumecontroller "github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume"
	"github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume/metrics"
)

// A sync period no test runs long enough to see: only event-driven work can bind.
const noResync = time.Hour

func TestPVCMVolumeArrivesAfterPreBoundClaim(t *testing.T) {
	tCtx, testClient, ns, runController := setUpController(t, "pvcm-pv-later")
	runController()

	const n = 50
	modes := []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	for i := range n {
		pvc := createPVC(fmt.Sprintf("claim-%02d", i), ns.Name, "1G", modes, "")
		pvc.Spec.VolumeName = fmt.Sprintf("pvcm-later-%02d", i)
		if _, err := testClient.CoreV1().PersistentVolumeClaims(ns.Name).Create(tCtx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Each claim has been synced and found its volume missing (one FailedBinding event each)
	// before the volumes exist.
	pollFor(t, "a FailedBinding event on every claim", 30*time.Second, func() (bool, error) {
		events, err := testClient.CoreV1().Events(ns.Name).List(tCtx, metav1.ListOptions{FieldSelector: "reason=FailedBinding"})
		if err != nil {
			return false, err
		}
		claims := map[string]bool{}
		for _, e := range events.Items {
			claims[e.InvolvedObject.Name] = true
		}
		return len(claims) == n, nil
	})
	for i := range n {
		pv := createPV(fmt.Sprintf("pvcm-later-%02d", i), "/tmp/foo", "1G", modes, v1.PersistentVolumeReclaimRetain)
		if _, err := testClient.CoreV1().PersistentVolumes().Create(tCtx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// With a sync period of an hour, only the PV events can have queued the claims.
	pollFor(t, "every claim Bound to its own volume", 60*time.Second, func() (bool, error) {
		return allBoundOneToOne(tCtx, testClient, ns.Name, n)
	})
}

func TestPVCMConflictStormFromACompetingWriter(t *testing.T) {
	tCtx, testClient, ns, runController := setUpController(t, "pvcm-conflicts")

	const prebound, matched = 150, 50
	modes := []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	for i := range prebound + matched {
		pv := createPV(fmt.Sprintf("pvcm-storm-%03d", i), "/tmp/foo", "1G", modes, v1.PersistentVolumeReclaimRetain)
		if _, err := testClient.CoreV1().PersistentVolumes().Create(tCtx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	conflictsBefore := conflicts(t)

	// The competing writer: bumps every PV and claim again and again with full updates, so the
	// binder's writes keep hitting stale resourceVersions.
	writerCtx, stopWriter := context.WithCancel(tCtx)
	var writes atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; writerCtx.Err() == nil; round++ {
				for i := w; i < prebound+matched; i += 4 {
					touchVolume(writerCtx, testClient, fmt.Sprintf("pvcm-storm-%03d", i), round, &writes)
					touchClaim(writerCtx, testClient, ns.Name, fmt.Sprintf("claim-%03d", i), round, &writes)
				}
			}
		}()
	}
	defer func() { stopWriter(); wg.Wait() }()

	runController()
	for i := range prebound + matched {
		pvc := createPVC(fmt.Sprintf("claim-%03d", i), ns.Name, "1G", modes, "")
		if i < prebound {
			pvc.Spec.VolumeName = fmt.Sprintf("pvcm-storm-%03d", i)
		}
		if _, err := testClient.CoreV1().PersistentVolumeClaims(ns.Name).Create(tCtx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Right after the create, while the binder is likely syncing the claim it was just told
		// about: its claim write, a few round trips later, then carries a stale resourceVersion.
		// (The background writer alone may miss a binder that binds faster than it loops.)
		touchClaim(tCtx, testClient, ns.Name, pvc.Name, -1, &writes)
	}
	pollFor(t, "every claim Bound, one to one, despite the competing writer", 120*time.Second, func() (bool, error) {
		return allBoundOneToOne(tCtx, testClient, ns.Name, prebound+matched)
	})
	stopWriter()
	wg.Wait()
	got := conflicts(t) - conflictsBefore
	t.Logf("competing writer made %d updates; the binder met %d conflicts and retried them", writes.Load(), int(got))
	if got == 0 {
		t.Errorf("no sync conflicts were counted: the storm did not reach the binder (writer made %d updates)", writes.Load())
	}
	// Pre-bound claims got exactly their volumes.
	for i := range prebound {
		pvc, err := testClient.CoreV1().PersistentVolumeClaims(ns.Name).Get(tCtx, fmt.Sprintf("claim-%03d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("pvcm-storm-%03d", i); pvc.Spec.VolumeName != want {
			t.Errorf("claim %s bound to %s, want %s", pvc.Name, pvc.Spec.VolumeName, want)
		}
	}
}

// testSetup is an apiserver, our controller on informers not started yet (no resync), and a
// namespace; everything is torn down after the test.
type testSetup struct {
	server     *kubeapiservertesting.TestServer
	ctx        testContext
	client     *clientset.Clientset
	controller *persistentvolumecontroller.PersistentVolumeController
	informers  informers.SharedInformerFactory
	ns         *v1.Namespace
}

func newTestSetup(t *testing.T, namespaceName string) *testSetup {
	s := kubeapiservertesting.StartTestServerOrDie(t, nil, []string{"--disable-admission-plugins=ServiceAccount,StorageObjectInUseProtection"}, framework.SharedEtcd())
	t.Cleanup(s.TearDownFn)
	tCtx := initTestContext(t)
	t.Cleanup(func() { tCtx.Cancel("test has completed") })
	testClient, ctrl, informers, watchPV, watchPVC := createClients(tCtx, namespaceName, t, s, noResync)
	t.Cleanup(watchPV.Stop)
	t.Cleanup(watchPVC.Stop)
	ns := framework.CreateNamespaceOrDie(testClient, namespaceName, t)
	t.Cleanup(func() { framework.DeleteNamespaceOrDie(testClient, ns, t) })
	t.Cleanup(func() {
		_ = testClient.CoreV1().PersistentVolumes().DeleteCollection(context.TODO(), metav1.DeleteOptions{}, metav1.ListOptions{})
	})
	return &testSetup{server: s, ctx: tCtx, client: testClient, controller: ctrl, informers: informers, ns: ns}
}

// setUpController is newTestSetup whose runController starts the informers and the controller.
func setUpController(t *testing.T, namespaceName string) (testContext, *clientset.Clientset, *v1.Namespace, func()) {
	s := newTestSetup(t, namespaceName)
	return s.ctx, s.client, s.ns, func() {
		s.informers.Start(s.ctx.Done())
		go s.controller.Run(s.ctx)
	}
}

func touchVolume(ctx context.Context, c clientset.Interface, name string, round int, writes *atomic.Int64) {
	pv, err := c.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return
	}
	if pv.Annotations == nil {
		pv.Annotations = map[string]string{}
	}
	pv.Annotations["pvcm.test/competing-writer"] = fmt.Sprint(round)
	if _, err := c.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err == nil {
		writes.Add(1)
	}
}

func touchClaim(ctx context.Context, c clientset.Interface, ns, name string, round int, writes *atomic.Int64) {
	pvc, err := c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return
	}
	if pvc.Annotations == nil {
		pvc.Annotations = map[string]string{}
	}
	pvc.Annotations["pvcm.test/competing-writer"] = fmt.Sprint(round)
	if _, err := c.CoreV1().PersistentVolumeClaims(ns).Update(ctx, pvc, metav1.UpdateOptions{}); err == nil {
		writes.Add(1)
	}
}

func conflicts(t *testing.T) float64 {
	t.Helper()
	var total float64
	for _, queue := range []string{"claims", "volumes"} {
		v, err := testutil.GetCounterMetricValue(metrics.SyncConflictsTotal.WithLabelValues(queue))
		if err != nil {
			t.Fatal(err)
		}
		total += v
	}
	return total
}

// allBoundOneToOne: n claims, all Bound, each to a volume whose claimRef points back at it.
func allBoundOneToOne(ctx context.Context, c clientset.Interface, ns string, n int) (bool, error) {
	claims, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	if len(claims.Items) != n {
		return false, nil
	}
	volumes, err := c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	byName := map[string]*v1.PersistentVolume{}
	claimsPerVolume := map[string]int{}
	for i := range volumes.Items {
		pv := &volumes.Items[i]
		byName[pv.Name] = pv
	}
	for _, pvc := range claims.Items {
		if pvc.Status.Phase != v1.ClaimBound {
			return false, nil
		}
		pv := byName[pvc.Spec.VolumeName]
		if pv == nil || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID || pv.Status.Phase != v1.VolumeBound {
			return false, nil
		}
		claimsPerVolume[pv.Name]++
	}
	for name, count := range claimsPerVolume {
		if count != 1 {
			return false, fmt.Errorf("volume %s holds %d claims", name, count)
		}
	}
	return true, nil
}

// pollFor polls cond until it holds; an error from cond (an invariant broken) fails at once.
func pollFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond()
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
