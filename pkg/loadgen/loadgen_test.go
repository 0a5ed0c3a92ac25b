package loadgen

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

func boundPair(cfg *Config, i int, volumeName string, uid types.UID) (*v1.PersistentVolume, *v1.PersistentVolumeClaim) {
	pvc := cfg.Claim(i)
	pvc.UID = uid
	pvc.Spec.VolumeName = volumeName
	pvc.Status.Phase = v1.ClaimBound
	pv := cfg.Volume(i)
	pv.Status.Phase = v1.VolumeBound
	pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: pvc.Namespace, Name: pvc.Name, UID: uid}
	return pv, pvc
}

func TestVerify(t *testing.T) {
	cfg := Config{Scenario: ScenarioPrebound, Namespace: "ns", Prefix: "t"}
	pv1, pvc1 := boundPair(&cfg, 1, cfg.name(1), "u1")
	pv2, pvc2 := boundPair(&cfg, 2, cfg.name(2), "u2")

	tests := []struct {
		name    string
		mutate  func(pv2 *v1.PersistentVolume, pvc2 *v1.PersistentVolumeClaim)
		wantErr string
	}{
		{name: "one to one", mutate: func(*v1.PersistentVolume, *v1.PersistentVolumeClaim) {}},
		{name: "claim pending", mutate: func(_ *v1.PersistentVolume, c *v1.PersistentVolumeClaim) { c.Status.Phase = v1.ClaimPending }, wantErr: "is Pending"},
		{name: "claimRef of another claim", mutate: func(pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) { pv.Spec.ClaimRef.Name = pvc1.Name }, wantErr: "whose claimRef"},
		{name: "stale claimRef UID", mutate: func(pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) { pv.Spec.ClaimRef.UID = "old" }, wantErr: "whose claimRef"},
		{name: "two claims on one volume", mutate: func(_ *v1.PersistentVolume, c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = pv1.Name }, wantErr: "named by 2 claims"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pv, pvc := pv2.DeepCopy(), pvc2.DeepCopy()
			tc.mutate(pv, pvc)
			client := fake.NewClientset(pv1, pvc1, pv, pvc)
			err := Verify(context.Background(), client, cfg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	r := &Result{}
	for i := 1; i <= 100; i++ {
		r.Samples = append(r.Samples, Sample{Latency: time.Duration(i) * time.Millisecond})
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := r.Percentile(p); got != want {
			t.Errorf("p%v = %s, want %s", p, got, want)
		}
	}
	if got := (&Result{}).Percentile(50); got != 0 {
		t.Errorf("empty result p50 = %s, want 0", got)
	}
}

// TestTrackerResumesAfterWatchCloses: on a long run the apiserver closes the watch (or fails to
// re-open it for a while); claims bound afterwards must still be observed.
func TestTrackerResumesAfterWatchCloses(t *testing.T) {
	client := fake.NewClientset()
	watchers := make(chan *watch.FakeWatcher, 3)
	calls := atomic.Int32{}
	client.PrependWatchReactor("persistentvolumeclaims", func(clienttesting.Action) (bool, watch.Interface, error) {
		if calls.Add(1) == 2 {
			return true, nil, errors.New("apiserver overloaded") // the first re-watch fails
		}
		w := watch.NewFakeWithChanSize(10, false)
		watchers <- w
		return true, w, nil
	})
	tracker := newBindTracker(2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := tracker.watch(ctx, client, "ns", "load"); err != nil {
		t.Fatal(err)
	}
	bound := func(name, rv string) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv},
			Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound}}
	}
	first := <-watchers
	first.Modify(bound("load-00001", "10"))
	first.Stop()
	second := <-watchers
	second.Modify(bound("load-00002", "11"))
	select {
	case <-tracker.allBound:
	case <-time.After(10 * time.Second):
		t.Fatalf("tracker saw %d of 2 bound claims after the watch was re-opened", tracker.count.Load())
	}
	if calls.Load() != 3 {
		t.Errorf("watch calls = %d, want 3 (first, failed retry, resumed)", calls.Load())
	}
}

// TestMeasureWriteCeilingDoesABindsWrites: the ceiling is measured on exactly what a bind writes:
// per pair two creates, then PV update, PV status, claim update, claim status, and no reads.
func TestMeasureWriteCeilingDoesABindsWrites(t *testing.T) {
	client := fake.NewClientset()
	cfg := Config{Namespace: "ns", Prefix: "ceiling", Count: 5, Concurrency: 2}
	res, err := MeasureWriteCeiling(context.Background(), client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Creates != 10 || res.BindWrites != 20 || res.WritesPerSecond <= 0 {
		t.Errorf("result %+v, want 10 creates, 20 bind writes and a rate", res)
	}
	verbs := map[string]int{}
	for _, a := range client.Actions() {
		verbs[a.GetVerb()+" "+a.GetResource().Resource+"/"+a.GetSubresource()]++
	}
	want := map[string]int{
		"create persistentvolumes/": 5, "create persistentvolumeclaims/": 5,
		"update persistentvolumes/": 5, "update persistentvolumes/status": 5,
		"update persistentvolumeclaims/": 5, "update persistentvolumeclaims/status": 5,
	}
	if len(verbs) != len(want) {
		t.Errorf("API calls %v, want exactly %v", verbs, want)
	}
	for k, n := range want {
		if verbs[k] != n {
			t.Errorf("%s: %d calls, want %d", k, verbs[k], n)
		}
	}
	pv, err := client.CoreV1().PersistentVolumes().Get(context.Background(), "ceiling-00003", metav1.GetOptions{})
	if err != nil || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != "ceiling-00003" {
		t.Errorf("PV not written like a bind: %v %v", pv, err)
	}
}

// TestClaimRefScenarioObjects: in the claimref scenario the volume reserves its claim by
// namespace and name (no UID, as operators write it) and the claim names no volume; Verify still
// wants each claim on its own volume.
func TestClaimRefScenarioObjects(t *testing.T) {
	cfg := Config{Scenario: ScenarioClaimRef, Namespace: "ns", Prefix: "t"}
	pv, pvc := cfg.Volume(3), cfg.Claim(3)
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != "ns" || ref.Name != pvc.Name || ref.UID != "" {
		t.Errorf("volume claimRef %+v, want ns/%s without UID", pv.Spec.ClaimRef, pvc.Name)
	}
	if pvc.Spec.VolumeName != "" {
		t.Errorf("claim names volume %q, want none", pvc.Spec.VolumeName)
	}
	if prebound := (&Config{Scenario: ScenarioPrebound, Namespace: "ns", Prefix: "t"}).Volume(3); prebound.Spec.ClaimRef != nil {
		t.Errorf("prebound volume has claimRef %+v, want none", prebound.Spec.ClaimRef)
	}

	// Claims 1 and 2 bound the wrong way round, each pair consistent in itself.
	pv1, pvc1 := boundPair(&cfg, 1, cfg.name(2), "u1")
	pv2, pvc2 := boundPair(&cfg, 2, cfg.name(1), "u2")
	pv1.Spec.ClaimRef, pv2.Spec.ClaimRef = pv2.Spec.ClaimRef, pv1.Spec.ClaimRef
	err := Verify(context.Background(), fake.NewClientset(pv1, pvc1, pv2, pvc2), cfg)
	if err == nil || !strings.Contains(err.Error(), "not to its own volume") {
		t.Errorf("claims swapped between reserved volumes: %v, want an error", err)
	}
}

func TestProvisionerCreatesVolumeLikeExternalProvisioner(t *testing.T) {
	cfg := Config{Scenario: ScenarioProvisioning, Namespace: "ns", Prefix: "p", Count: 3, Concurrency: 2}
	client := fake.NewClientset()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := startProvisioner(ctx, client, &cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	handed := cfg.Claim(1)
	handed.UID = "uid-1"
	if handed.Spec.StorageClassName == nil || *handed.Spec.StorageClassName != cfg.StorageClassName() || handed.Spec.VolumeName != "" {
		t.Fatalf("claim: class %v, volumeName %q; want the scenario's class and no volume", handed.Spec.StorageClassName, handed.Spec.VolumeName)
	}
	handed.Annotations = map[string]string{annStorageProvisioner: Provisioner}
	notYet := cfg.Claim(2)
	notYet.UID = "uid-2"
	other := cfg.Claim(3)
	other.UID = "uid-3"
	other.Annotations = map[string]string{annStorageProvisioner: "ebs.csi.aws.com"}
	for _, c := range []*v1.PersistentVolumeClaim{handed, notYet, other} {
		if _, err := client.CoreV1().PersistentVolumeClaims("ns").Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The same claim again (a later event): still one volume.
	if _, err := client.CoreV1().PersistentVolumeClaims("ns").Update(ctx, handed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pv *v1.PersistentVolume
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		pv, err = client.CoreV1().PersistentVolumes().Get(ctx, "pvc-uid-1", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatal("no volume provisioned for the handed-over claim")
	}
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.Name != handed.Name || ref.Namespace != "ns" || ref.UID != "uid-1" ||
		pv.Spec.StorageClassName != cfg.StorageClassName() || pv.Annotations[annProvisionedBy] != Provisioner ||
		pv.Labels["loadgen"] != "p" || pv.Spec.CSI == nil {
		t.Fatalf("volume %+v does not look like external-provisioner's", pv)
	}
	pvs, _ := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if len(pvs.Items) != 1 {
		t.Fatalf("%d volumes, want 1 (only the claim handed to us, once)", len(pvs.Items))
	}
	if err := p.failure(); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyProvisioning(t *testing.T) {
	cfg := Config{Scenario: ScenarioProvisioning, Namespace: "ns", Prefix: "p"}
	claim := cfg.Claim(1)
	claim.UID = "u1"
	pv := cfg.ProvisionedVolume(claim)
	claim.Spec.VolumeName = pv.Name
	claim.Status.Phase = v1.ClaimBound
	pv.Status.Phase = v1.VolumeBound
	if err := Verify(context.Background(), fake.NewClientset(pv, claim), cfg); err != nil {
		t.Fatalf("provisioned pair: %v", err)
	}
	other := cfg.Claim(2)
	other.UID = "u2"
	wrong := cfg.ProvisionedVolume(other)
	wrong.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: claim.Name, UID: "u1"}
	claim.Spec.VolumeName = wrong.Name
	if err := Verify(context.Background(), fake.NewClientset(wrong, claim), cfg); err == nil || !strings.Contains(err.Error(), "not to the volume provisioned for it") {
		t.Fatalf("claim bound to another claim's volume: %v", err)
	}
}

func TestWFFCScenarioObjects(t *testing.T) {
	cfg := Config{Scenario: ScenarioWFFC, Namespace: "ns", Prefix: "w"}
	node := func(name string, taint string, unschedulable bool) *v1.Node {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
			Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}
		n.Spec.Unschedulable = unschedulable
		if taint != "" {
			n.Spec.Taints = []v1.Taint{{Key: taint, Effect: v1.TaintEffectNoSchedule}}
		}
		return n
	}
	notReady := node("kwok-2", "", false)
	notReady.Status.Conditions[0].Status = v1.ConditionFalse
	client := fake.NewClientset(node("kwok-1", "kwok.x-k8s.io/node", false), node("cp", "node-role.kubernetes.io/control-plane", false),
		node("cordoned", "", true), node("kwok-0", "", false), notReady)
	hosts, err := schedulableHostnames(context.Background(), client, 2)
	if err != nil || strings.Join(hosts, ",") != "kwok-0,kwok-1" {
		t.Fatalf("schedulable hostnames %v, %v; want kwok-0,kwok-1", hosts, err)
	}
	pv := cfg.LocalVolume(1, "kwok-1")
	terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
	if pv.Spec.Local == nil || pv.Spec.StorageClassName != cfg.LocalClassName() || len(terms) != 1 ||
		terms[0].MatchExpressions[0].Values[0] != "kwok-1" || terms[0].MatchExpressions[0].Key != v1.LabelHostname {
		t.Fatalf("local volume %+v: want a local PV of the class with affinity to kwok-1", pv.Spec)
	}
	claim := cfg.Claim(1)
	if claim.Spec.VolumeName != "" || *claim.Spec.StorageClassName != cfg.LocalClassName() {
		t.Fatalf("claim: volumeName %q class %q; want none and the WaitForFirstConsumer class", claim.Spec.VolumeName, *claim.Spec.StorageClassName)
	}
	if mode := cfg.LocalStorageClass().VolumeBindingMode; mode == nil || *mode != "WaitForFirstConsumer" {
		t.Fatalf("class binding mode %v", mode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := schedulableHostnames(ctx, fake.NewClientset(node("cp", "node-role.kubernetes.io/control-plane", false)), 0); err == nil {
		t.Fatal("no schedulable node: want an error saying so")
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := schedulableHostnames(ctx, client, 3); err == nil || !strings.Contains(err.Error(), "needs 3") {
		t.Fatalf("2 schedulable nodes of 3 wanted: error %v, want one saying 3 are needed", err)
	}
}

// A PV the apiserver keeps refusing is reported, not left to look like a slow binder.
func TestProvisionerReportsFailedCreates(t *testing.T) {
	cfg := Config{Scenario: ScenarioProvisioning, Namespace: "ns", Prefix: "p", Count: 1, Concurrency: 1}
	client := fake.NewClientset()
	client.PrependReactor("create", "persistentvolumes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("quota exceeded")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := startProvisioner(ctx, client, &cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	claim := cfg.Claim(1)
	claim.UID = "uid-1"
	claim.Annotations = map[string]string{annStorageProvisioner: Provisioner}
	if _, err := client.CoreV1().PersistentVolumeClaims("ns").Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return p.failure() != nil, nil
	}); err != nil {
		t.Fatal("a refused create was not reported")
	}
	if !strings.Contains(p.failure().Error(), "quota exceeded") {
		t.Fatalf("failure %v does not say why", p.failure())
	}
}

// Each order creates both objects of a pair, in that order; a claim's clock starts before its
// create call.
func TestCreatePairOrders(t *testing.T) {
	for _, tc := range []struct {
		order string
		want  []string // resources in create order; nil: any order
	}{
		{"", []string{"persistentvolumes", "persistentvolumeclaims"}},
		{OrderPVFirst, []string{"persistentvolumes", "persistentvolumeclaims"}},
		{OrderClaimFirst, []string{"persistentvolumeclaims", "persistentvolumes"}},
		{OrderTogether, nil},
	} {
		t.Run(tc.order, func(t *testing.T) {
			cfg := Config{Scenario: ScenarioPrebound, Namespace: "ns", Prefix: "p", Count: 1, Concurrency: 1, Order: tc.order}
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
			tracker := newBindTracker(1)
			if err := createPair(context.Background(), client, cfg, 1, tracker); err != nil {
				t.Fatal(err)
			}
			if len(created) != 2 || (tc.want != nil && (created[0] != tc.want[0] || created[1] != tc.want[1])) {
				t.Errorf("created %v, want %v", created, tc.want)
			}
			if start := tracker.startedCopy()[cfg.name(1)]; start.IsZero() || start.After(claimCreatedAt) {
				t.Errorf("clock started at %v, after the claim's create at %v", start, claimCreatedAt)
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
