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
	"k8s.io/apimachinery/pkg/types"
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
