package loadgen

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	clientset "k8s.io/client-go/kubernetes"
)

// Scenario is one kind of load: how its objects look, how they are created, when the clock
// starts, and what a correct end state is. Each scenario is one file that registers itself; pv-load's
// help, `pv-load --list` and `make bench`'s list come from the registry.
type Scenario interface {
	// Name is what --scenario and make bench's SCENARIOS take (prebound-claim-first, ...).
	Name() string
	// Help is one line for pv-load --list and its help.
	Help() string
	// Bench is how make bench runs the scenario by default.
	Bench() Bench
	// Shape makes the i-th claim and volume of the run this scenario's (both start as 1Gi,
	// ReadWriteOnce, class "", labelled; the volume a hostPath, the claim naming no volume).
	Shape(c *Config, i int, claim *v1.PersistentVolumeClaim, volume *v1.PersistentVolume)
	// Create creates the run's objects and returns when the clock started; it calls
	// env.Started(claim) when each claim's latency starts.
	Create(ctx context.Context, env *Env) (start time.Time, err error)
	// Finish runs once the claims are bound or the wait timed out: a scenario that plays another
	// component checks it did its part, one that measures more fills r.
	Finish(ctx context.Context, env *Env, r *Result) error
	// WritesAfterStart is what must pass the apiserver between the start of the clock and the
	// last bind, at 4 writes per bind: the report's floor (Result.WritesAfterStart).
	WritesAfterStart(count int) int
	// CheckBind says what is wrong, for this scenario, with claim bound to claim.Spec.VolumeName
	// ("" if nothing); Verify has checked already that both sides name each other.
	CheckBind(c *Config, claim *v1.PersistentVolumeClaim) string
}

// Bench is how make bench (hack/bench/bench.sh) runs a scenario.
type Bench struct {
	// Counts names bench.sh's variable with the run's claim counts: COUNT (default),
	// PVC_FIRST_COUNT or PREBOUND_COUNTS.
	Counts string
	// SyncPeriod is the binder's --pvclaimbinder-sync-period; "" for bench.sh's SYNC_PERIOD.
	SyncPeriod string
	// Default: in make bench's default SCENARIOS.
	Default bool
}

// Env is what a scenario's Create and Finish work with.
type Env struct {
	Client clientset.Interface
	Config *Config
	// Watch is done when the run ends: watches and helpers a scenario starts live that long.
	Watch   context.Context
	tracker *bindTracker
	// state is the scenario's own, from Create to Finish.
	state any
}

// Started marks the start of claim name's latency.
func (e *Env) Started(name string) { e.tracker.started(name, time.Now()) }

// ForEach calls fn(1..Count) from Concurrency goroutines and returns the first error.
func (e *Env) ForEach(ctx context.Context, fn func(i int) error) error {
	return forEach(ctx, e.Config.Count, e.Config.Concurrency, fn)
}

var registry = map[string]Scenario{}

// Register adds a scenario; a name registered twice panics at start.
func Register(s Scenario) {
	if _, dup := registry[s.Name()]; dup {
		panic(fmt.Sprintf("loadgen: scenario %q registered twice", s.Name()))
	}
	registry[s.Name()] = s
}

// Lookup returns the scenario called name.
func Lookup(name string) (Scenario, error) {
	if s, ok := registry[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("loadgen: unknown scenario %q (want one of %s)", name, strings.Join(Names(), ", "))
}

// Scenarios returns every registered scenario, by name.
func Scenarios() []Scenario {
	out := make([]Scenario, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Scenario) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// Names returns the registered scenarios' names, sorted.
func Names() []string {
	var names []string
	for _, s := range Scenarios() {
		names = append(names, s.Name())
	}
	return names
}

// base gives a scenario the defaults: no finish step, every claim bound to a volume of the run.
type base struct{}

func (base) Finish(context.Context, *Env, *Result) error                         { return nil }
func (base) CheckBind(*Config, *v1.PersistentVolumeClaim) string                 { return "" }
func (base) Bench() Bench                                                        { return Bench{Counts: "COUNT", Default: true} }
func (base) Shape(*Config, int, *v1.PersistentVolumeClaim, *v1.PersistentVolume) {}

// ownVolume is the check of the scenarios whose claims each have a volume of their own name.
func ownVolume(_ *Config, claim *v1.PersistentVolumeClaim) string {
	if claim.Spec.VolumeName != claim.Name {
		return fmt.Sprintf("claim %s is bound to %s, not to its own volume", claim.Name, claim.Spec.VolumeName)
	}
	return ""
}
