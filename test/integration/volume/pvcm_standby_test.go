package volume

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/component-base/metrics/testutil"

	persistentvolumecontroller "github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume"
	"github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume/metrics"
)

// A warm standby (--leader-elect-warm-standby) runs the binder's informers while another replica
// leads and makes its controller only when it takes the Lease: the controller's handlers then get
// the long-synced caches' objects as their initial list. It must bind what arrived while nobody
// led, and leave the pairs the old leader settled alone (patch 0020's paced first pass), as after
// a cold start.
func TestPVCMTakeoverOnWarmInformers(t *testing.T) {
	setup := newTestSetup(t, "pvcm-warm-standby")
	tCtx, testClient, ns, leader, leaderInformers := setup.ctx, setup.client, setup.ns, setup.controller, setup.informers
	namespace := ns.Name

	// The standby's informers start before anything exists and follow everything from then on.
	standbyInformers := informers.NewSharedInformerFactory(testClient, noResync)
	volumes := standbyInformers.Core().V1().PersistentVolumes()
	claims := standbyInformers.Core().V1().PersistentVolumeClaims()
	volumes.Informer()
	claims.Informer()
	standbyInformers.Storage().V1().StorageClasses().Informer()
	standbyInformers.Core().V1().Pods().Informer()
	standbyInformers.Core().V1().Nodes().Informer()
	standbyInformers.Start(tCtx.Done())
	standbyInformers.WaitForCacheSync(tCtx.Done())

	// The leader binds the first pairs: pre-bound ones and claims matched to free volumes.
	modes := []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	createPairs := func(prefix string, prebound, matched int) {
		t.Helper()
		for i := range prebound + matched {
			pv := createPV(fmt.Sprintf("%s-%s-%02d", namespace, prefix, i), "/tmp/foo", "1G", modes, v1.PersistentVolumeReclaimRetain)
			if _, err := testClient.CoreV1().PersistentVolumes().Create(tCtx, pv, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			pvc := createPVC(fmt.Sprintf("%s-%02d", prefix, i), ns.Name, "1G", modes, "")
			if i < prebound {
				pvc.Spec.VolumeName = pv.Name
			}
			if _, err := testClient.CoreV1().PersistentVolumeClaims(ns.Name).Create(tCtx, pvc, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	leaderCtx, stopLeader := context.WithCancel(tCtx)
	leaderInformers.Start(leaderCtx.Done())
	leaderDone := make(chan struct{})
	go func() {
		defer close(leaderDone)
		leader.Run(leaderCtx)
	}()
	const settledPairs = 40
	createPairs("first", 30, settledPairs-30)
	pollFor(t, "the leader binds the first pairs", 60*time.Second, func() (bool, error) {
		return allBoundOneToOne(tCtx, testClient, ns.Name, settledPairs)
	})
	// The leader stops (its process would exit before the Lease is released).
	stopLeader()
	<-leaderDone
	settled := resourceVersions(t, tCtx, testClient, ns.Name)

	// Nobody leads: new pairs wait, and the standby's caches follow them.
	const newPairs = 20
	createPairs("while-nobody-leads", 15, newPairs-15)
	pollFor(t, "the standby's caches hold every object", 30*time.Second, func() (bool, error) {
		pvs, err := volumes.Lister().List(labels.Everything())
		if err != nil {
			return false, err
		}
		pvcs, err := claims.Lister().List(labels.Everything())
		return len(pvs) == settledPairs+newPairs && len(pvcs) == settledPairs+newPairs, err
	})

	// The standby takes over: its controller is made now, on the synced informers.
	initialPassBefore := initialPassRequeues(t)
	binderConfig := restclient.CopyConfig(setup.server.ClientConfig)
	binderConfig.QPS, binderConfig.Burst = 1000000, 1000000
	standby, err := persistentvolumecontroller.NewController(tCtx, persistentvolumecontroller.ControllerParameters{
		KubeClient:                clientset.NewForConfigOrDie(binderConfig),
		SyncPeriod:                noResync,
		ConcurrentSyncs:           getConcurrentSyncs(),
		VolumeInformer:            volumes,
		ClaimInformer:             claims,
		ClassInformer:             standbyInformers.Storage().V1().StorageClasses(),
		PodInformer:               standbyInformers.Core().V1().Pods(),
		NodeInformer:              standbyInformers.Core().V1().Nodes(),
		EnableDynamicProvisioning: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	go standby.Run(tCtx)
	pollFor(t, "the new leader binds the pairs that came while nobody led", 60*time.Second, func() (bool, error) {
		return allBoundOneToOne(tCtx, testClient, ns.Name, settledPairs+newPairs)
	})
	// Its first pass has re-queued every settled claim and volume (paced) ...
	pollFor(t, "the first pass over the settled pairs", 60*time.Second, func() (bool, error) {
		return initialPassRequeues(t)-initialPassBefore >= 2*settledPairs, nil
	})
	// ... and none of them was written to.
	after := resourceVersions(t, tCtx, testClient, ns.Name)
	for key, rv := range settled {
		if after[key] != rv {
			t.Errorf("%s was written to by the new leader (resourceVersion %s -> %s)", key, rv, after[key])
		}
	}
}

// resourceVersions maps "pv/NAME" and "pvc/NAME" of the namespace's claims and their volumes to
// their resourceVersions.
func resourceVersions(t *testing.T, ctx context.Context, c clientset.Interface, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	pvcs, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pvc := range pvcs.Items {
		out["pvc/"+pvc.Name] = pvc.ResourceVersion
	}
	pvs, err := c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pv := range pvs.Items {
		if pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Namespace == ns {
			out["pv/"+pv.Name] = pv.ResourceVersion
		}
	}
	return out
}

// initialPassRequeues sums pv_controller_requeues_total{reason="initial-pass"} over both queues.
func initialPassRequeues(t *testing.T) int {
	t.Helper()
	var total float64
	for _, queue := range []string{metrics.ClaimQueue, metrics.VolumeQueue} {
		v, err := testutil.GetCounterMetricValue(metrics.RequeuesTotal.WithLabelValues(queue, metrics.RequeueInitialPass))
		if err != nil {
			t.Fatal(err)
		}
		total += v
	}
	return int(total)
}
