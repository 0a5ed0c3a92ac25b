package writepacer

import (
	"context"
	"errors"
	"io"
	"math/rand"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock moves only when a test says so.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newLimiter(t *testing.T, cfg Config) *Limiter {
	t.Helper()
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func acquireAsync(l *Limiter, ctx context.Context) <-chan error {
	done := make(chan error, 1)
	go func() { done <- l.Acquire(ctx) }()
	return done
}

func waitForWaiters(t *testing.T, l *Limiter, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		got := l.waiters.Len()
		l.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestNewRejectsBadBounds(t *testing.T) {
	for _, cfg := range []Config{{Max: 0}, {Max: -3}, {Max: 4, Tolerance: 0.5}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v): no error", cfg)
		}
	}
	l := newLimiter(t, Config{Max: 1})
	if l.cfg.Min != 1 {
		t.Errorf("Min above Max is not lowered to it: %d", l.cfg.Min)
	}
}

func TestLimiterAdmitsUpToTheLimitThenHandsOverInArrivalOrder(t *testing.T) {
	l := newLimiter(t, Config{Max: 2})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if err := l.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	first := acquireAsync(l, ctx)
	waitForWaiters(t, l, 1)
	second := acquireAsync(l, ctx)
	waitForWaiters(t, l, 2)
	select {
	case <-first:
		t.Fatal("a third write was admitted with the limit at 2")
	default:
	}
	l.Release(0, false)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	select {
	case <-second:
		t.Fatal("the later waiter went before the earlier one or beyond the limit")
	default:
	}
	if got := l.InFlight(); got != 2 {
		t.Errorf("in flight %d, want 2", got)
	}
	l.Release(0, false)
	if err := <-second; err != nil {
		t.Fatal(err)
	}
}

func TestWaiterGivesUpWithItsContextAndFreesNothing(t *testing.T) {
	l := newLimiter(t, Config{Max: 1})
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := acquireAsync(l, ctx)
	waitForWaiters(t, l, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire after cancel: %v, want context.Canceled", err)
	}
	if got := l.InFlight(); got != 1 {
		t.Errorf("in flight %d after a waiter gave up, want 1", got)
	}
	waitForWaiters(t, l, 0)
	l.Release(0, false)
	if got := l.InFlight(); got != 0 {
		t.Errorf("in flight %d after the release, want 0", got)
	}
}

// The limit follows the apiserver: it shrinks while writes take more than Tolerance times the
// baseline and grows back to Max when they return to it.
func TestLimitShrinksWhenWritesQueueAndGrowsBack(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	l := newLimiter(t, Config{Max: 64, Min: 2, Tolerance: 2, BaselineWindow: 30 * time.Second, Now: clock.Now})
	write := func(latency time.Duration) {
		if err := l.Acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
		clock.Step(time.Millisecond)
		l.Release(latency, true)
	}
	for i := 0; i < 50; i++ {
		write(10 * time.Millisecond)
	}
	if got := l.Limit(); got != 64 {
		t.Fatalf("limit %d at the baseline, want the maximum 64", got)
	}
	for i := 0; i < 20; i++ {
		write(15 * time.Millisecond) // within tolerance
	}
	if got := l.Limit(); got != 64 {
		t.Fatalf("limit %d within tolerance, want 64", got)
	}
	for i := 0; i < 200; i++ {
		write(200 * time.Millisecond) // 20 times the baseline: queued
	}
	low := l.Limit()
	if low > 8 {
		t.Fatalf("limit %d after 200 writes at 20x the baseline, want it down near the minimum", low)
	}
	for i := 0; i < 300; i++ {
		write(10 * time.Millisecond)
	}
	if got := l.Limit(); got != 64 {
		t.Errorf("limit %d after the apiserver recovered, want 64 again (was %d)", got, low)
	}
	for i := 0; i < 100; i++ {
		l.Release(0, false) // unanswered writes (errors) do not move it
		l.inflight++
	}
	if got := l.Limit(); got != 64 {
		t.Errorf("unanswered writes moved the limit to %d", got)
	}
}

func TestBaselineForgetsAnOldMinimum(t *testing.T) {
	w := windowedMin{bucket: 10 * time.Second}
	t0 := time.Unix(0, 0)
	if got := w.observe(t0, 5*time.Millisecond); got != 5*time.Millisecond {
		t.Fatalf("first baseline %v", got)
	}
	if got := w.observe(t0.Add(25*time.Second), 20*time.Millisecond); got != 5*time.Millisecond {
		t.Errorf("baseline %v 25 s later, want the 5 ms still remembered", got)
	}
	if got := w.observe(t0.Add(31*time.Second), 20*time.Millisecond); got != 20*time.Millisecond {
		t.Errorf("baseline %v 31 s later, want 20 ms (5 ms forgotten after three buckets)", got)
	}
	if got := w.observe(t0.Add(10*time.Minute), 40*time.Millisecond); got != 40*time.Millisecond {
		t.Errorf("baseline %v after a long idle time, want the new write's 40 ms", got)
	}
}

// blockingTransport holds writes until released and counts what it sees.
type blockingTransport struct {
	release chan struct{}
	reads   atomic.Int32
	writes  atomic.Int32
}

func (b *blockingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		b.reads.Add(1)
	} else {
		b.writes.Add(1)
		<-b.release
	}
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}"))}, nil
}

func TestReadsPassWhileWritesWait(t *testing.T) {
	l := newLimiter(t, Config{Max: 1})
	bt := &blockingTransport{release: make(chan struct{})}
	rt := l.WrapTransport(bt)
	do := func(method string) <-chan error {
		done := make(chan error, 1)
		go func() {
			req, _ := http.NewRequest(method, "http://apiserver/api/v1/persistentvolumes/pv1", nil)
			resp, err := rt.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		return done
	}
	w1 := do(http.MethodPut)
	deadline := time.Now().Add(5 * time.Second)
	for bt.writes.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the first write never reached the transport")
		}
		time.Sleep(time.Millisecond)
	}
	w2 := do(http.MethodPatch)
	waitForWaiters(t, l, 1)
	if err := <-do(http.MethodGet); err != nil {
		t.Fatalf("a read while the write slot is taken: %v", err)
	}
	if got := bt.writes.Load(); got != 1 {
		t.Fatalf("%d writes reached the transport with the limit at 1", got)
	}
	close(bt.release)
	for _, w := range []<-chan error{w1, w2} {
		if err := <-w; err != nil {
			t.Fatal(err)
		}
	}
	if got := l.InFlight(); got != 0 {
		t.Errorf("in flight %d after every write returned", got)
	}
}

// queueingServer answers a write after a service time that grows with the writes it holds, as an
// apiserver short of CPU does, and records the most it held at once.
type queueingServer struct {
	base    time.Duration
	holding atomic.Int32
	most    atomic.Int32
}

func (s *queueingServer) RoundTrip(req *http.Request) (*http.Response, error) {
	n := s.holding.Add(1)
	defer s.holding.Add(-1)
	for {
		most := s.most.Load()
		if n <= most || s.most.CompareAndSwap(most, n) {
			break
		}
	}
	select {
	case <-time.After(s.base * time.Duration(n)):
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}"))}, nil
}

// Many writers, some giving up, through the limiter (run with -race): never more writes at the
// server than the maximum, every slot returned, and against a server whose latency grows with its
// queue the limit settles well below the maximum.
func TestStressManyWritersAgainstAQueueingServer(t *testing.T) {
	const maxInFlight, writers, writesEach = 64, 100, 15
	l := newLimiter(t, Config{Max: maxInFlight, Min: 2, Tolerance: 2, BaselineWindow: 30 * time.Second})
	srv := &queueingServer{base: 200 * time.Microsecond}
	rt := l.WrapTransport(srv)
	var wg sync.WaitGroup
	var failed, gaveUp atomic.Int32
	for w := 0; w < writers; w++ {
		rng := rand.New(rand.NewSource(int64(w)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < writesEach; i++ {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if rng.Intn(10) == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.Intn(3000))*time.Microsecond)
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://apiserver/api/v1/persistentvolumes/pv", nil)
				resp, err := rt.RoundTrip(req)
				switch {
				case err == nil:
					resp.Body.Close()
				case ctx.Err() != nil:
					gaveUp.Add(1)
				default:
					failed.Add(1)
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d writes failed without their context ending", n)
	}
	if most := srv.most.Load(); most > maxInFlight {
		t.Errorf("the server held %d writes at once, more than the maximum %d", most, maxInFlight)
	}
	if got := l.InFlight(); got != 0 {
		t.Errorf("in flight %d after every writer returned (slots lost)", got)
	}
	l.mu.Lock()
	waiting := l.waiters.Len()
	l.mu.Unlock()
	if waiting != 0 {
		t.Errorf("%d waiters left behind", waiting)
	}
	if got := l.Limit(); got >= maxInFlight/2 {
		t.Errorf("limit %d against a server whose latency grows with its queue, want well below %d", got, maxInFlight)
	}
	t.Logf("limit %d, most at the server %d, %d writes gave up", l.Limit(), srv.most.Load(), gaveUp.Load())
}
