package faultproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// backend is a stand-in apiserver: it counts the requests that reach it, answers a create
// with the object, a get with a pod, and a watch with an event every 10 ms until the client leaves.
type backend struct {
	*httptest.Server
	writes, reads, watches atomic.Int64
}

func newBackend(t *testing.T) *backend {
	b := &backend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		pod := v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "1"}}
		switch {
		case isWatch(r):
			b.watches.Add(1)
			flusher := w.(http.Flusher)
			for i := 0; ; i++ {
				pod.ResourceVersion = fmt.Sprint(i + 2)
				if err := json.NewEncoder(w).Encode(map[string]any{"type": "MODIFIED", "object": pod}); err != nil {
					return
				}
				flusher.Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		case isWrite(r.Method):
			b.writes.Add(1)
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(pod)
		default:
			b.reads.Add(1)
			_ = json.NewEncoder(w).Encode(pod)
		}
	}))
	t.Cleanup(b.Close)
	return b
}

// start serves a proxy to a backend; configure, if any, sets the proxy up before it serves.
func start(t *testing.T, rates Rates, configure ...func(*Proxy)) (*Proxy, *backend, kubernetes.Interface) {
	t.Helper()
	b := newBackend(t)
	target, _ := url.Parse(b.URL)
	p := New(Config{Target: target, Transport: http.DefaultTransport, Rates: rates, Seed: 1})
	for _, c := range configure {
		c(p)
	}
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: front.URL})
	if err != nil {
		t.Fatal(err)
	}
	return p, b, client
}

func create(client kubernetes.Interface) error {
	_, err := client.CoreV1().Pods("ns").Create(context.Background(), &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{})
	return err
}

func TestRefusalsNeverReachTheAPIServer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rates Rates
		check func(error) bool
	}{
		{Refused500, Rates{Refused500: 1}, apierrors.IsInternalError},
		{Refused503, Rates{Refused503: 1}, apierrors.IsServiceUnavailable},
		{Reset, Rates{Reset: 1}, func(err error) bool { return err != nil && apierrors.ReasonForError(err) == metav1.StatusReasonUnknown }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, b, client := start(t, tc.rates)
			err := create(client)
			if !tc.check(err) {
				t.Fatalf("create: %v, not what %s answers", err, tc.name)
			}
			if b.writes.Load() != 0 {
				t.Fatalf("the apiserver saw %d writes, want none", b.writes.Load())
			}
			if p.Counts()[tc.name] == 0 {
				t.Fatalf("counts %v lack %s", p.Counts(), tc.name)
			}
		})
	}
}

// 429 carries Retry-After, as the apiserver's priority and fairness sends it (client-go waits
// that long and retries: asked with a plain client here).
func TestThrottledCarriesRetryAfter(t *testing.T) {
	p, b, _ := start(t, Rates{Throttled429: 1})
	front := httptest.NewServer(p)
	defer front.Close()
	resp, err := http.Post(front.URL+"/api/v1/namespaces/ns/pods", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || b.writes.Load() != 0 {
		t.Fatalf("status %d, Retry-After %q, writes %d", resp.StatusCode, resp.Header.Get("Retry-After"), b.writes.Load())
	}
}

// A lost answer is the dangerous fault: the write is applied, the client sees only a broken
// connection. Reads are never lost that way.
func TestLostAnswerAppliesTheWrite(t *testing.T) {
	p, b, client := start(t, Rates{LostAnswer: 1})
	if err := create(client); err == nil {
		t.Fatal("create answered; want the answer lost")
	}
	if b.writes.Load() < 1 {
		t.Fatal("the write did not reach the apiserver")
	}
	if _, err := client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{}); err != nil {
		t.Fatalf("get: %v; reads are not lost", err)
	}
	if c := p.Counts(); c[LostAnswer] < 1 || c[Forwarded] < 2 {
		t.Fatalf("counts %v", c)
	}
}

func TestWatchGoneMakesTheClientRelist(t *testing.T) {
	_, b, client := start(t, Rates{WatchGone: 1})
	_, err := client.CoreV1().Pods("ns").Watch(context.Background(), metav1.ListOptions{ResourceVersion: "1"})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("watch: %v, want 410 Gone/Expired so that a reflector relists", err)
	}
	if b.watches.Load() != 0 {
		t.Fatal("the watch reached the apiserver")
	}
}

// A cut watch ends after relaying what came before the cut.
func TestWatchCutEndsTheStream(t *testing.T) {
	// The cut fires when the test closes cut: after the first event, however late that comes.
	cut := make(chan time.Time)
	var drawn atomic.Int64
	p, _, client := start(t, Rates{WatchCut: 1, WatchCutMax: 200 * time.Millisecond}, func(p *Proxy) {
		p.after = func(d time.Duration) <-chan time.Time {
			drawn.Store(int64(d))
			return cut
		}
	})
	w, err := client.CoreV1().Pods("ns").Watch(context.Background(), metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	deadline := time.After(10 * time.Second)
	select {
	case _, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch ended before its first event, counts %v", p.Counts())
		}
	case <-deadline:
		t.Fatal("no first event")
	}
	// duration draws from [1ms, WatchCutMax+1ms): never an immediate cut.
	if d := time.Duration(drawn.Load()); d < time.Millisecond || d > p.cfg.Rates.WatchCutMax+time.Millisecond {
		t.Fatalf("cut drawn after %s, want up to WatchCutMax", d)
	}
	close(cut)
	events := 1
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				if p.Counts()[WatchCut] != 1 {
					t.Fatalf("watch ended after %d events, counts %v", events, p.Counts())
				}
				return
			}
			events++
		case <-deadline:
			t.Fatal("the watch was not cut")
		}
	}
}

func TestOutageRefusesWritesOnlyAndFaultsCanStop(t *testing.T) {
	p, b, client := start(t, Rates{Refused500: 1})
	p.SetFaults(false)
	if err := create(client); err != nil {
		t.Fatalf("faults off: %v", err)
	}
	p.SetOutage(true)
	if err := create(client); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("outage: %v, want 503", err)
	}
	if _, err := client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{}); err != nil {
		t.Fatalf("a read during the outage: %v", err)
	}
	p.SetOutage(false)
	if err := create(client); err != nil {
		t.Fatalf("after the outage: %v", err)
	}
	if b.writes.Load() != 2 || p.Counts()[OutageRefuse] < 1 {
		t.Fatalf("writes %d, counts %v", b.writes.Load(), p.Counts())
	}
}
