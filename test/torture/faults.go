package torture

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Faults are the ways the API fails a binder's request. Before: the request is refused and
// nothing is stored. Lost: the write is stored, and the answer never reaches the binder.
const (
	faultConflict = "409"          // a write refused as if another writer had been first
	faultInternal = "500"          // the apiserver or etcd failed
	faultThrottle = "429"          // priority and fairness turned the request away (Retry-After 1 s)
	faultTimeout  = "timeout"      // 504: the apiserver gave up waiting for etcd
	faultLost     = "lost-answer"  // the write was stored; the client saw a reset connection
	faultLostTime = "lost-timeout" // the write was stored; the client saw a 504
	faultWatchCut = "watch-cut"    // a watch ended; the reflector watches again from its resourceVersion
	faultWatch410 = "watch-410"    // a watch answered 410 Gone; the reflector lists again
	faultCompact  = "compaction"   // the history was compacted: an older resourceVersion gets 410
)

// faultConfig says how often each kind of fault happens. A seed draws one (see workload.go).
type faultConfig struct {
	Refuse float64 // share of the binder's requests refused (409 on writes only, 500, 429, timeout)
	Lost   float64 // share of the binder's writes stored with the answer lost
	// WatchCuts and Compactions happen this many times over the run, at times drawn by the seed.
	WatchCuts, Compactions int
}

func (c faultConfig) none() bool {
	return c.Refuse == 0 && c.Lost == 0 && c.WatchCuts == 0 && c.Compactions == 0
}

func (c faultConfig) String() string {
	return fmt.Sprintf("refuse=%.2f lost=%.2f watch-cuts=%d compactions=%d", c.Refuse, c.Lost, c.WatchCuts, c.Compactions)
}

// faultPlan decides each request's fault from the seed and the request alone (verb, resource,
// object, and how many such requests came before), so that an object's n-th write meets the
// same fault whatever the interleaving of the binder's workers.
type faultPlan struct {
	seed    uint64
	cfg     faultConfig
	enabled bool
	seen    map[string]int
	counts  map[string]int
}

type fault struct {
	before, after error
}

func newFaultPlan(seed uint64, cfg faultConfig) *faultPlan {
	return &faultPlan{seed: seed, cfg: cfg, enabled: !cfg.none(), seen: map[string]int{}, counts: map[string]int{}}
}

func (p *faultPlan) draw(parts ...string) float64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range 8 {
		b[i] = byte(p.seed >> (8 * i))
	}
	h.Write(b[:])
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return float64(h.Sum64()>>11) / float64(1<<53)
}

// request is called under the store's lock for each request of the binder's client.
func (p *faultPlan) request(verb, resource, name string) fault {
	objectName := name[strings.LastIndex(name, "/")+1:] // a 409 names the object alone, as the API server's does
	if !p.enabled {
		return fault{}
	}
	id := verb + " " + resource + " " + name
	n := p.seen[id]
	p.seen[id] = n + 1
	x := p.draw(id, fmt.Sprint(n))
	write := verb != "get" && verb != "list" && verb != "watch"
	gr := schema.GroupResource{Resource: resource}
	if x < p.cfg.Refuse {
		kinds := []string{faultInternal, faultThrottle, faultTimeout}
		if write {
			kinds = append(kinds, faultConflict)
		}
		kind := kinds[int(p.draw(id, fmt.Sprint(n), "kind")*float64(len(kinds)))]
		p.counts[kind]++
		switch kind {
		case faultConflict:
			return fault{before: apierrors.NewConflict(gr, objectName, errors.New("injected by the torture"))}
		case faultInternal:
			return fault{before: apierrors.NewInternalError(errors.New("injected by the torture"))}
		case faultThrottle:
			return fault{before: apierrors.NewTooManyRequests("injected by the torture", 1)}
		default:
			return fault{before: apierrors.NewServerTimeout(gr, verb, 1)}
		}
	}
	if write && x < p.cfg.Refuse+p.cfg.Lost {
		if p.draw(id, fmt.Sprint(n), "lost") < 0.5 {
			p.counts[faultLost]++
			return fault{after: errors.New("read tcp 127.0.0.1:40312->127.0.0.1:6443: read: connection reset by peer (injected by the torture after the write was stored)")}
		}
		p.counts[faultLostTime]++
		return fault{after: apierrors.NewTimeoutError("injected by the torture after the write was stored", 1)}
	}
	return fault{}
}

func (p *faultPlan) note(kind string) { p.counts[kind]++ }

func (p *faultPlan) countsCopy() map[string]int { return maps.Clone(p.counts) }
