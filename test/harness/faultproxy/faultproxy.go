package faultproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault names, as the counts and the report show them.
const (
	Refused500   = "refused-500"
	Refused503   = "refused-503"
	Throttled429 = "throttled-429"
	Reset        = "reset"
	LostAnswer   = "lost-answer"
	WatchCut     = "watch-cut"
	WatchGone    = "watch-410"
	OutageRefuse = "outage-503"
	Forwarded    = "forwarded"
	// ForwardedWrites counts the writes among Forwarded (applied, answered or not).
	ForwardedWrites = "forwarded-writes"
)

// Rates are the probabilities of each fault, per request of the kind it applies to.
type Rates struct {
	// Refused500, Refused503, Throttled429, Reset: any request but a watch, before forwarding.
	Refused500, Refused503, Throttled429, Reset float64
	// LostAnswer: a write (POST, PUT, PATCH, DELETE), after the apiserver applied it.
	LostAnswer float64
	// WatchCut: a watch, closed after a random time up to WatchCutMax.
	WatchCut    float64
	WatchCutMax time.Duration
	// WatchGone: a watch, answered 410 Gone at once.
	WatchGone float64
}

// Config of a proxy.
type Config struct {
	// Target is the apiserver's URL; Transport carries the proxy's credentials to it.
	Target    *url.URL
	Transport http.RoundTripper
	Rates     Rates
	// Seed of the fault draws (the order of concurrent requests is not reproducible; the mix is).
	Seed uint64
}

// Proxy is an http.Handler.
type Proxy struct {
	cfg    Config
	lock   sync.Mutex
	rng    *rand.Rand
	outage atomic.Bool
	faults atomic.Bool // false: forward everything (faults stopped, to measure settling)
	counts sync.Map    // fault name -> *atomic.Int64
	// after starts a watch's cut timer: time.After; tests fire the cut when they choose.
	after func(time.Duration) <-chan time.Time
}

// New returns a proxy with faults on.
func New(cfg Config) *Proxy {
	if cfg.Rates.WatchCutMax <= 0 {
		cfg.Rates.WatchCutMax = 30 * time.Second
	}
	p := &Proxy{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), after: time.After}
	p.faults.Store(true)
	return p
}

// SetOutage refuses every write with 503 while on.
func (p *Proxy) SetOutage(on bool) { p.outage.Store(on) }

// SetFaults turns the random faults on or off (an outage is separate).
func (p *Proxy) SetFaults(on bool) { p.faults.Store(on) }

// Counts returns how often each fault was injected, and how many requests were forwarded.
func (p *Proxy) Counts() map[string]int64 {
	out := map[string]int64{}
	p.counts.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// CountsString is Counts in one sorted line.
func (p *Proxy) CountsString() string {
	c := p.Counts()
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%d", k, c[k])
	}
	return b.String()
}

func (p *Proxy) count(fault string) {
	v, _ := p.counts.LoadOrStore(fault, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// draw returns true with probability rate.
func (p *Proxy) draw(rate float64) bool {
	if rate <= 0 || !p.faults.Load() {
		return false
	}
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.rng.Float64() < rate
}

func (p *Proxy) duration(max time.Duration) time.Duration {
	p.lock.Lock()
	defer p.lock.Unlock()
	return time.Duration(p.rng.Int64N(int64(max))) + time.Millisecond
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

func isWatch(r *http.Request) bool {
	return r.Method == http.MethodGet && (r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" || strings.Contains(r.URL.Path, "/watch/"))
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<20)
	watch := isWatch(r)
	write := isWrite(r.Method)
	switch {
	case write && p.outage.Load():
		p.count(OutageRefuse)
		writeStatus(w, http.StatusServiceUnavailable, "ServiceUnavailable", "fault proxy: outage", 0)
		return
	case watch && p.draw(p.cfg.Rates.WatchGone):
		p.count(WatchGone)
		writeStatus(w, http.StatusGone, "Expired", "fault proxy: too old resource version", 0)
		return
	case !watch && p.draw(p.cfg.Rates.Refused500):
		p.count(Refused500)
		writeStatus(w, http.StatusInternalServerError, "InternalError", "fault proxy: internal error", 0)
		return
	case !watch && p.draw(p.cfg.Rates.Refused503):
		p.count(Refused503)
		writeStatus(w, http.StatusServiceUnavailable, "ServiceUnavailable", "fault proxy: unavailable", 0)
		return
	case !watch && p.draw(p.cfg.Rates.Throttled429):
		p.count(Throttled429)
		writeStatus(w, http.StatusTooManyRequests, "TooManyRequests", "fault proxy: throttled", 1)
		return
	case !watch && p.draw(p.cfg.Rates.Reset):
		p.count(Reset)
		resetConnection(w)
		return
	}
	lose := write && p.draw(p.cfg.Rates.LostAnswer)
	var cut <-chan time.Time
	if watch && p.draw(p.cfg.Rates.WatchCut) {
		cut = p.after(p.duration(p.cfg.Rates.WatchCutMax))
	}

	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host = p.cfg.Target.Scheme, p.cfg.Target.Host
	out.Host = p.cfg.Target.Host
	resp, err := p.cfg.Transport.RoundTrip(out)
	if err != nil {
		writeStatus(w, http.StatusBadGateway, "InternalError", "fault proxy: "+err.Error(), 0)
		return
	}
	defer resp.Body.Close()
	p.count(Forwarded)
	if write {
		p.count(ForwardedWrites)
	}
	if lose {
		// Applied by the apiserver; the client never learns the outcome.
		_, _ = io.Copy(io.Discard, resp.Body)
		p.count(LostAnswer)
		resetConnection(w)
		return
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	if !watch {
		_, _ = io.Copy(w, resp.Body)
		return
	}
	p.stream(w, resp.Body, cut)
}

// stream copies a watch, flushing each chunk, until it ends or cut fires.
func (p *Proxy) stream(w http.ResponseWriter, body io.Reader, cut <-chan time.Time) {
	flusher, _ := w.(http.Flusher)
	chunks := make(chan []byte)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(chunks)
		buf := make([]byte, 32<<10)
		for {
			n, err := body.Read(buf)
			if n > 0 {
				select {
				case chunks <- bytes.Clone(buf[:n]):
				case <-done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case chunk, ok := <-chunks:
			if !ok {
				return
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		case <-cut:
			p.count(WatchCut)
			return
		}
	}
}

// resetConnection closes the client's connection without an answer.
func resetConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // HTTP/2: aborts the stream
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// writeStatus answers with a metav1.Status, as the apiserver does.
func writeStatus(w http.ResponseWriter, code int, reason, message string, retryAfter int) {
	w.Header().Set("Content-Type", "application/json")
	if retryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(retryAfter))
	}
	w.WriteHeader(code)
	status := map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason, "code": code}
	if retryAfter > 0 {
		status["details"] = map[string]any{"retryAfterSeconds": retryAfter}
	}
	_ = json.NewEncoder(w).Encode(status)
}
