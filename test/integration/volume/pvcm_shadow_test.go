package volume

// The shadow (--shadow, docs/operators/shadow.md) against a real apiserver: ours with every write a
// dry run, beside a binder that binds for real (the test, writing what KCM's binder writes for a
// pre-bound pair, after ours has decided and re-decided). What reaches the apiserver is counted
// per claim.

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/testutil"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/test/integration/framework"

	persistentvolumecontroller "github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume"
	"github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume/metrics"
	"github.com/fastpv/pv-controller-manager/pkg/shadow"
)

// sentWrites counts the requests that reached the apiserver, under the shadow's dry-run transport.
type sentWrites struct {
	next http.RoundTripper
	mu   sync.Mutex
	// by object ("persistentvolumes/NAME", "persistentvolumeclaims/NAME"), then "status 200" etc.
	byObject map[string]map[string]int
	notDry   []string
}

func (s *sentWrites) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(req)
	if req.Method == http.MethodGet || !strings.Contains(req.URL.Path, "/persistentvolume") {
		return resp, err
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var object, sub string
	for i, p := range parts {
		if (p == "persistentvolumes" || p == "persistentvolumeclaims") && i+1 < len(parts) {
			object = p + "/" + parts[i+1]
			if i+2 < len(parts) {
				sub = parts[i+2]
			}
		}
	}
	code := "error"
	if err == nil {
		code = fmt.Sprint(resp.StatusCode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.URL.Query().Get("dryRun") != "All" {
		s.notDry = append(s.notDry, req.Method+" "+req.URL.Path)
	}
	if s.byObject[object] == nil {
		s.byObject[object] = map[string]int{}
	}
	s.byObject[object][strings.TrimSpace(req.Method+" "+sub)+" "+code]++
	return resp, err
}

// perPair returns, for pair i, the writes sent for its volume and its claim, and how many were 409.
func (s *sentWrites) perPair(i int) (total, conflicts int, detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var words []string
	for _, object := range []string{"persistentvolumes/" + shadowPairName(i), "persistentvolumeclaims/" + shadowPairName(i)} {
		for what, n := range s.byObject[object] {
			total += n
			if strings.HasSuffix(what, " 409") {
				conflicts += n
			}
			words = append(words, fmt.Sprintf("%s %s: %d", strings.SplitN(object, "/", 2)[0], what, n))
		}
	}
	sort.Strings(words)
	return total, conflicts, strings.Join(words, ", ")
}

func shadowPairName(i int) string { return fmt.Sprintf("shadow-%02d", i) }

// TestPVCMShadowSubmitsEachDecisionOnce: a dry run is never stored, so every sync of a pair that
// the real binder has not bound yet (here the binder's periodic resync, every second, as it runs
// every --pvclaimbinder-sync-period beside a KCM that takes minutes; KCM's own writes do the same)
// starts again from the stored objects and decides the same bind again. The apiserver must see
// that bind's writes once per claim (4: the volume, its status, the claim, its status), and the
// comparison with the real binder must still count every claim agree.
func TestPVCMShadowSubmitsEachDecisionOnce(t *testing.T) {
	const pairs, resyncsBeforeKCM = 20, 3
	s := kubeapiservertesting.StartTestServerOrDie(t, nil, []string{"--disable-admission-plugins=ServiceAccount,StorageObjectInUseProtection"}, framework.SharedEtcd())
	t.Cleanup(s.TearDownFn)
	tCtx := initTestContext(t)
	t.Cleanup(func() { tCtx.Cancel("test has completed") })
	testConfig := restclient.CopyConfig(s.ClientConfig)
	testConfig.QPS, testConfig.Burst = 1000000, 1000000
	testClient := clientset.NewForConfigOrDie(testConfig)
	ns := framework.CreateNamespaceOrDie(testClient, "pvcm-shadow", t)
	t.Cleanup(func() { framework.DeleteNamespaceOrDie(testClient, ns, t) })
	t.Cleanup(func() {
		_ = testClient.CoreV1().PersistentVolumes().DeleteCollection(context.TODO(), metav1.DeleteOptions{}, metav1.ListOptions{})
	})

	// The shadow: its client as runBinder builds it in shadow mode (JSON, the dry-run transport
	// observed by the tracker), what it sends counted below the dry-run transport, and how often
	// it decided each bind (its volume write naming the claim) counted above it.
	tracker := shadow.NewTracker(tCtx.Logger(), shadow.Config{Window: time.Hour})
	sent := &sentWrites{byObject: map[string]map[string]int{}}
	var decidedMu sync.Mutex
	decided := map[string]int{}
	observe := func(w shadow.Write) {
		tracker.Observe(w)
		if w.Resource == "persistentvolumes" && w.Subresource == "" && strings.Contains(string(w.Body), `"claimRef"`) {
			for i := range pairs {
				if strings.Contains(string(w.Body), `"name":"`+shadowPairName(i)+`"`) {
					decidedMu.Lock()
					decided[shadowPairName(i)]++
					decidedMu.Unlock()
				}
			}
		}
	}
	shadowConfig := restclient.CopyConfig(s.ClientConfig)
	shadowConfig.QPS, shadowConfig.Burst = 1000000, 1000000
	shadowConfig.ContentType, shadowConfig.AcceptContentTypes = "application/json", "application/json"
	shadowConfig.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		sent.next = rt
		return shadow.DryRun(sent, observe)
	})
	shadowClient := clientset.NewForConfigOrDie(shadowConfig)
	factory := informers.NewSharedInformerFactory(testClient, 0)
	ctrl, err := persistentvolumecontroller.NewController(tCtx, persistentvolumecontroller.ControllerParameters{
		KubeClient:      shadowClient,
		SyncPeriod:      time.Second,
		ConcurrentSyncs: getConcurrentSyncs(),
		VolumeInformer:  factory.Core().V1().PersistentVolumes(),
		ClaimInformer:   factory.Core().V1().PersistentVolumeClaims(),
		ClassInformer:   factory.Storage().V1().StorageClasses(),
		PodInformer:     factory.Core().V1().Pods(),
		NodeInformer:    factory.Core().V1().Nodes(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := factory.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { tracker.OnClaim(obj.(*v1.PersistentVolumeClaim)) },
		UpdateFunc: func(_, obj any) { tracker.OnClaim(obj.(*v1.PersistentVolumeClaim)) },
	}); err != nil {
		t.Fatal(err)
	}

	modes := []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	for i := range pairs {
		if _, err := testClient.CoreV1().PersistentVolumes().Create(tCtx, createPV(shadowPairName(i), "/tmp/foo", "1G", modes, v1.PersistentVolumeReclaimRetain), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pvc := createPVC(shadowPairName(i), ns.Name, "1G", modes, "")
		pvc.Spec.VolumeName = shadowPairName(i)
		if _, err := testClient.CoreV1().PersistentVolumeClaims(ns.Name).Create(tCtx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	resyncs := func() float64 {
		var sum float64
		for _, q := range []string{metrics.ClaimQueue, metrics.VolumeQueue} {
			v, _ := testutil.GetCounterMetricValue(metrics.RequeuesTotal.WithLabelValues(q, metrics.RequeueResync))
			sum += v
		}
		return sum
	}
	resyncsAtStart := resyncs()
	factory.Start(tCtx.Done())
	go ctrl.Run(tCtx)

	// While the real binder has not bound them, the shadow decides each bind again on every resync.
	pollFor(t, fmt.Sprintf("the shadow deciding every bind %d times (resyncs of unbound pairs)", resyncsBeforeKCM), 60*time.Second, func() (bool, error) {
		decidedMu.Lock()
		defer decidedMu.Unlock()
		for i := range pairs {
			if decided[shadowPairName(i)] < resyncsBeforeKCM {
				return false, nil
			}
		}
		return true, nil
	})

	// The real binder binds each pair as KCM's binder does a pre-bound one: the volume's claimRef
	// (bound-by-controller), its status, the claim's bind-completed, its status.
	for i := range pairs {
		name := shadowPairName(i)
		claim, err := testClient.CoreV1().PersistentVolumeClaims(ns.Name).Get(tCtx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pv, err := testClient.CoreV1().PersistentVolumes().Get(tCtx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns.Name, Name: name, UID: claim.UID, ResourceVersion: claim.ResourceVersion}
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, "pv.kubernetes.io/bound-by-controller", "yes")
		if pv, err = testClient.CoreV1().PersistentVolumes().Update(tCtx, pv, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		pv.Status.Phase = v1.VolumeBound
		if pv, err = testClient.CoreV1().PersistentVolumes().UpdateStatus(tCtx, pv, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
		if claim, err = testClient.CoreV1().PersistentVolumeClaims(ns.Name).Update(tCtx, claim, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		claim.Status.Phase, claim.Status.AccessModes, claim.Status.Capacity = v1.ClaimBound, pv.Spec.AccessModes, pv.Spec.Capacity
		if _, err = testClient.CoreV1().PersistentVolumeClaims(ns.Name).UpdateStatus(tCtx, claim, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pollFor(t, "every claim compared: agree", 60*time.Second, func() (bool, error) {
		return tracker.Counts()[shadow.Agree] == pairs, nil
	})
	if c := tracker.Counts(); len(c) != 1 {
		t.Errorf("outcomes %v, want %d agree only", c, pairs)
	}

	decidedMu.Lock()
	decisions := 0
	for _, n := range decided {
		decisions += n
	}
	decidedMu.Unlock()
	var total, conflicts int
	for i := range pairs {
		n, c, detail := sent.perPair(i)
		total, conflicts = total+n, conflicts+c
		if n > 4 || c > 0 {
			t.Errorf("%s: %d dry-run writes reached the apiserver, %d of them 409, want at most the bind's 4 and none refused: %s", shadowPairName(i), n, c, detail)
		}
	}
	t.Logf("%d pre-bound pairs: the shadow decided the bind %d times (%.1f per claim; %.0f keys re-queued by its resync), sent %d dry-run writes (%.2f per claim), %d answered 409",
		pairs, decisions, float64(decisions)/pairs, resyncs()-resyncsAtStart, total, float64(total)/pairs, conflicts)
	if len(sent.notDry) > 0 {
		t.Errorf("writes without dryRun=All: %v", sent.notDry)
	}
}
