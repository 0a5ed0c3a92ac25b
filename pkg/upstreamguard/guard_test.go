package upstreamguard

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"
)

func kcmPod(name, controllers string) *corev1.Pod {
	command := []string{"kube-controller-manager", "--kubeconfig=/etc/kubernetes/controller-manager.conf"}
	if controllers != "" {
		command = append(command, "--controllers="+controllers)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "kube-system", UID: "uid-" + types.UID(name),
			Labels:      map[string]string{"component": "kube-controller-manager", "tier": "control-plane"},
			Annotations: map[string]string{"kubernetes.io/config.mirror": "abc"},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-controller-manager", Command: command}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

type harness struct {
	guard    *Guard
	client   *fake.Clientset
	recorder *record.FakeRecorder
	writes   atomic.Int32
	rt       http.RoundTripper
}

func start(t *testing.T, allow bool, pods ...*corev1.Pod) *harness {
	t.Helper()
	return startWith(t, Config{AllowCoexistence: allow}, pods...)
}

// startWith runs a guard with cfg's AllowCoexistence, LeaseName and clock over a fake API holding pods.
func startWith(t *testing.T, cfg Config, pods ...*corev1.Pod) *harness {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	h := &harness{recorder: record.NewFakeRecorder(100)}
	h.client = fake.NewClientset()
	for _, p := range pods {
		if _, err := h.client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.guard = New(Config{
		Client: h.client, Namespace: DefaultNamespace, Selector: labels.SelectorFromSet(labels.Set{"component": "kube-controller-manager"}),
		Recorder: h.recorder, CheckPeriod: time.Hour, AllowCoexistence: cfg.AllowCoexistence, LeaseName: cfg.LeaseName, clock: cfg.clock,
	})
	h.rt = h.guard.WrapTransport(roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		h.writes.Add(1)
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	}))
	done := make(chan struct{})
	go func() { defer close(done); h.guard.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

func (h *harness) waitFor(t *testing.T, what string, cond func(active []string) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		active, known := h.guard.Active()
		return known && cond(active), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func (h *harness) do(ctx context.Context, method string) error {
	req, _ := http.NewRequestWithContext(ctx, method, "https://apiserver/api/v1/persistentvolumes", nil)
	resp, err := h.rt.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	return err
}

// A held write: with a cancelled context it fails without reaching the apiserver.
func (h *harness) expectHeld(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := h.writes.Load()
	if err := h.do(ctx, http.MethodPut); err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("write while held: err %v, want a held error", err)
	}
	if h.writes.Load() != before {
		t.Errorf("a held write reached the apiserver")
	}
}

// expectReleasedBy starts a write while held, runs change, and expects the write to go through.
func (h *harness) expectReleasedBy(t *testing.T, what string, change func()) {
	t.Helper()
	result := make(chan error, 1)
	go func() { result <- h.do(context.Background(), http.MethodPost) }()
	change()
	select {
	case err := <-result:
		if err != nil {
			t.Fatalf("released write: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("write still held after %s", what)
	}
}

func TestUpstreamBinderHoldsWritesUntilKCMDropsIt(t *testing.T) {
	h := start(t, false, kcmPod("kube-controller-manager-cp1", "*,bootstrapsigner,tokencleaner"))
	h.waitFor(t, "KCM pod seen", func(active []string) bool { return len(active) == 1 })

	if v, _ := testutil.GetGaugeMetricValue(activeGauge); v != 1 {
		t.Errorf("pv_controller_upstream_binder_active = %v, want 1", v)
	}
	select {
	case ev := <-h.recorder.Events:
		if !strings.Contains(ev, "Warning "+ReasonUpstreamBinderActive) {
			t.Errorf("event %q, want a %s warning", ev, ReasonUpstreamBinderActive)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no Warning event")
	}
	if err := h.guard.Check(nil); err == nil || !strings.Contains(err.Error(), "kube-system/kube-controller-manager-cp1") {
		t.Errorf("readiness check = %v, want not ready naming the pod", err)
	}
	h.expectHeld(t)
	if err := h.do(context.Background(), http.MethodGet); err != nil || h.writes.Load() != 1 {
		t.Errorf("reads must pass while held: err %v, calls %d", err, h.writes.Load())
	}

	// A write started while held goes through once KCM is restarted without its binder.
	h.expectReleasedBy(t, "KCM dropped its binder", func() {
		pod := kcmPod("kube-controller-manager-cp1", "*,bootstrapsigner,tokencleaner,-persistentvolume-binder-controller")
		if _, err := h.client.CoreV1().Pods("kube-system").Update(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if v, _ := testutil.GetGaugeMetricValue(activeGauge); v != 0 {
		t.Errorf("pv_controller_upstream_binder_active = %v, want 0", v)
	}
	if err := h.guard.Check(nil); err != nil {
		t.Errorf("readiness check = %v, want ready", err)
	}
}

func TestIgnoresKCMWithoutBinderAndDeadPods(t *testing.T) {
	failed := kcmPod("kube-controller-manager-old", "*")
	failed.UID = "old"
	failed.Status.Phase = corev1.PodFailed
	other := kcmPod("not-kcm", "*")
	other.UID = "other"
	other.Spec.Containers[0].Command[0] = "/usr/local/bin/kube-scheduler"
	other.Spec.Containers[0].Name = "kube-scheduler"
	h := start(t, false, kcmPod("kube-controller-manager-cp1", "*,-persistentvolume-binder"), failed, other)
	h.waitFor(t, "first look", func(active []string) bool { return len(active) == 0 })
	if err := h.do(context.Background(), http.MethodPost); err != nil || h.writes.Load() != 1 {
		t.Errorf("write with no upstream binder: err %v, calls %d", err, h.writes.Load())
	}
}

func TestNoWritesBeforeFirstLook(t *testing.T) {
	g := New(Config{Selector: labels.Everything()})
	if err := g.Check(nil); err == nil {
		t.Error("readiness before the first look: want not ready")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.WaitUntilClear(ctx); err == nil {
		t.Error("WaitUntilClear before the first look: want held")
	}
}

func TestAllowCoexistenceWarnsButWrites(t *testing.T) {
	h := start(t, true, kcmPod("kube-controller-manager-cp1", ""))
	h.waitFor(t, "KCM pod seen", func(active []string) bool { return len(active) == 1 })
	if err := h.do(context.Background(), http.MethodPost); err != nil || h.writes.Load() != 1 {
		t.Errorf("write with --allow-upstream-binder: err %v, calls %d", err, h.writes.Load())
	}
	select {
	case ev := <-h.recorder.Events:
		if !strings.Contains(ev, "--allow-upstream-binder") {
			t.Errorf("event %q should say we bind too", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no Warning event")
	}
}
