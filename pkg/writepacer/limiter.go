package writepacer

import (
	"container/list"
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"
)

// Config sets a Limiter's bounds and how it reads latency.
type Config struct {
	// Max is the most writes in flight; the limit never exceeds it, and starts there.
	Max int
	// Min is the fewest writes the limit allows in flight, however slow the apiserver is.
	Min int
	// Tolerance is how many times the baseline latency a write may take before the limit shrinks.
	Tolerance float64
	// BaselineWindow is how long the least latency seen is remembered as the baseline.
	BaselineWindow time.Duration
	// Now reads the clock (time.Now when nil); tests set it.
	Now func() time.Time
}

// Defaults for the binder (cmd/pv-controller-manager/app/options).
const (
	DefaultMin            = 2
	DefaultTolerance      = 2.0
	DefaultBaselineWindow = 30 * time.Second
	// smoothing is the weight of one write's latency in the limit: about 20 writes to move most of
	// the way, a few tens of milliseconds at the binder's write rates.
	smoothing = 0.1
)

// Limiter bounds writes in flight (see the package doc). Safe for concurrent use.
type Limiter struct {
	cfg Config

	mu       sync.Mutex
	limit    float64
	inflight int
	waiters  list.List // of chan struct{}, closed when a slot is handed over, in arrival order
	baseline windowedMin
}

// New returns a Limiter; cfg.Max must be at least 1. Unset Min, Tolerance and BaselineWindow take
// the defaults above.
func New(cfg Config) (*Limiter, error) {
	if cfg.Max < 1 {
		return nil, fmt.Errorf("writepacer: Max must be at least 1, got %d", cfg.Max)
	}
	if cfg.Min <= 0 {
		cfg.Min = DefaultMin
	}
	cfg.Min = min(cfg.Min, cfg.Max)
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = DefaultTolerance
	}
	if cfg.Tolerance < 1 {
		return nil, fmt.Errorf("writepacer: Tolerance must be at least 1, got %g", cfg.Tolerance)
	}
	if cfg.BaselineWindow <= 0 {
		cfg.BaselineWindow = DefaultBaselineWindow
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	l := &Limiter{cfg: cfg, limit: float64(cfg.Max), baseline: windowedMin{bucket: cfg.BaselineWindow / 3}}
	setLimitMetric(l.limit)
	return l, nil
}

// Limit is the number of writes allowed in flight now.
func (l *Limiter) Limit() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int(l.limit)
}

// InFlight is the number of writes in flight now.
func (l *Limiter) InFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inflight
}

// Acquire waits for a slot (first come, first served) or for ctx to end. Each nil return must be
// followed by one Release.
func (l *Limiter) Acquire(ctx context.Context) error {
	l.mu.Lock()
	if l.waiters.Len() == 0 && l.inflight < int(l.limit) {
		l.inflight++
		setInFlightMetric(l.inflight)
		l.mu.Unlock()
		return nil
	}
	slot := make(chan struct{})
	e := l.waiters.PushBack(slot)
	l.mu.Unlock()
	start := l.cfg.Now()
	select {
	case <-slot:
		observeWait(l.cfg.Now().Sub(start))
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		defer l.mu.Unlock()
		select {
		case <-slot: // handed over while ctx ended: pass it on
			l.inflight--
			l.handOverLocked()
		default:
			l.waiters.Remove(e)
		}
		setInFlightMetric(l.inflight)
		return ctx.Err()
	}
}

// Release frees a slot. latency is how long the write took, answered is whether the apiserver
// answered it (any HTTP status); only answered writes move the limit.
func (l *Limiter) Release(latency time.Duration, answered bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight--
	if answered && latency > 0 {
		l.observeLocked(latency)
	}
	l.handOverLocked()
	setInFlightMetric(l.inflight)
}

func (l *Limiter) observeLocked(latency time.Duration) {
	base := l.baseline.observe(l.cfg.Now(), latency)
	gradient := math.Max(0.5, math.Min(1, l.cfg.Tolerance*float64(base)/float64(latency)))
	// Within tolerance the limit grows by about its square root per round of writes; beyond, it
	// shrinks towards what the latency says the apiserver takes without a queue.
	target := l.limit*gradient + math.Sqrt(l.limit)
	l.limit = math.Max(float64(l.cfg.Min), math.Min(float64(l.cfg.Max), (1-smoothing)*l.limit+smoothing*target))
	setLimitMetric(l.limit)
	observeLatency(latency, base)
}

// handOverLocked gives free slots to waiters, oldest first.
func (l *Limiter) handOverLocked() {
	for l.inflight < int(l.limit) && l.waiters.Len() > 0 {
		e := l.waiters.Front()
		l.waiters.Remove(e)
		l.inflight++
		close(e.Value.(chan struct{}))
	}
}

// WrapTransport limits every request that may write (anything but GET, HEAD, OPTIONS); reads go
// through at once.
func (l *Limiter) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		switch req.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return rt.RoundTrip(req)
		}
		if err := l.Acquire(req.Context()); err != nil {
			return nil, fmt.Errorf("waiting for a write slot (%d in flight): %w", l.InFlight(), err)
		}
		start := l.cfg.Now()
		resp, err := rt.RoundTrip(req)
		// The answer's headers mark the apiserver's latency; the body is small and read after.
		l.Release(l.cfg.Now().Sub(start), err == nil)
		return resp, err
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// windowedMin is the least latency seen in the last three buckets (the current one included), so a
// minimum is forgotten between two and three buckets after it was seen: the baseline follows an
// apiserver that became slower for good, and ignores one lucky fast write.
type windowedMin struct {
	bucket time.Duration
	start  time.Time        // of the current bucket
	mins   [3]time.Duration // current, previous, the one before; 0: no write seen
	last   time.Duration    // the baseline last returned, kept while no write is seen
}

func (w *windowedMin) observe(now time.Time, latency time.Duration) time.Duration {
	if w.start.IsZero() {
		w.start = now
	}
	for elapsed := now.Sub(w.start); elapsed >= w.bucket; elapsed -= w.bucket {
		w.mins[2], w.mins[1], w.mins[0] = w.mins[1], w.mins[0], 0
		w.start = w.start.Add(w.bucket)
		if w.mins == [3]time.Duration{} { // idle for the whole window: start again from now
			w.start = now
			break
		}
	}
	if w.mins[0] == 0 || latency < w.mins[0] {
		w.mins[0] = latency
	}
	w.last = 0
	for _, m := range w.mins {
		if m > 0 && (w.last == 0 || m < w.last) {
			w.last = m
		}
	}
	return w.last
}
