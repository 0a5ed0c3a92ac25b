package loadgen

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// ScenarioChurn: claims deleted and created again under the same name, as a StatefulSet with a
// Delete retention policy or an operator recycling claims does. Before the clock: N volumes
// reserve N claims by claimRef (Retain) and bind. Then, for each claim, from Concurrency
// goroutines: a fresh volume is created, the claim is deleted, and as soon as it is gone (KCM's
// pvc-protection controller removed its finalizer) it is created again without volumeName; its
// old volume, now Released, is deleted (pv-protection removes its finalizer). Latency is from the
// new claim's create call to Bound; the run also records each claim's and each old volume's delete
// -> gone, which is how long KCM's other controllers took beside the binder.
const ScenarioChurn = "churn"

// The label that marks the churn's setup claims: the bind tracker does not measure them.
const (
	phaseLabel = "loadgen-phase"
	phaseSetup = "setup"
)

type churn struct{ base }

func init() { Register(churn{}) }

func (churn) Name() string { return ScenarioChurn }
func (churn) Help() string {
	return "N bound claims deleted and created again under the same name while N fresh PVs appear; their old PVs deleted"
}

// WritesAfterStart, per claim: its delete, pvc-protection's finalizer removal, the fresh volume,
// the new claim, the old volume's Released status, the old volume's delete and pv-protection's
// finalizer removal, and the bind's 4.
func (churn) WritesAfterStart(n int) int { return 7*n + 4*n }

// oldVolumeName is the i-th volume bound before the clock; the fresh ones have the run's names.
func (c *Config) oldVolumeName(i int) string { return c.name(i) + "-old" }

// CheckBind: a new claim must be bound to a fresh volume, never to its name's old one (that one
// reserves the deleted claim's UID).
func (churn) CheckBind(c *Config, claim *v1.PersistentVolumeClaim) string {
	if strings.HasSuffix(claim.Spec.VolumeName, "-old") {
		return fmt.Sprintf("claim %s is bound to %s, a volume of a deleted claim", claim.Name, claim.Spec.VolumeName)
	}
	return ""
}

// churnState is what Create leaves for Finish.
type churnState struct {
	gone *goneTracker
	loop time.Duration
}

func (churn) Create(ctx context.Context, env *Env) (time.Time, error) {
	cfg, client := env.Config, env.Client
	gone, err := trackGone(env.Watch, env)
	if err != nil {
		return time.Time{}, err
	}
	state := &churnState{gone: gone}
	env.state = state

	// Before the clock: N claims bound to N volumes that reserve them by claimRef.
	if err := env.ForEach(ctx, func(i int) error {
		old := cfg.Volume(i)
		old.Name = cfg.oldVolumeName(i)
		old.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: cfg.Namespace, Name: cfg.name(i)}
		if err := createVolume(ctx, client, old); err != nil {
			return err
		}
		claim := cfg.Claim(i)
		claim.Labels[phaseLabel] = phaseSetup
		return createClaim(ctx, client, claim)
	}); err != nil {
		return time.Time{}, fmt.Errorf("churn: setup: %w", err)
	}
	if err := waitSetupBound(ctx, env); err != nil {
		return time.Time{}, err
	}

	start := time.Now()
	err = env.ForEach(ctx, func(i int) error {
		name := cfg.name(i)
		if err := createVolume(ctx, client, cfg.Volume(i)); err != nil {
			return err
		}
		claimGone := gone.deleting("claim/" + name)
		if err := client.CoreV1().PersistentVolumeClaims(cfg.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting claim %s: %w", name, err)
		}
		select {
		case <-claimGone:
		case <-ctx.Done():
			return ctx.Err()
		}
		env.Started(name)
		if err := createClaim(ctx, client, cfg.Claim(i)); err != nil {
			return err
		}
		gone.deleting("volume/" + cfg.oldVolumeName(i))
		if err := client.CoreV1().PersistentVolumes().Delete(ctx, cfg.oldVolumeName(i), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting volume %s: %w", cfg.oldVolumeName(i), err)
		}
		return nil
	})
	state.loop = time.Since(start)
	return start, err
}

// Finish waits (up to the run's timeout) until every old volume is gone and reports the
// delete -> gone times and the loop's length.
func (churn) Finish(ctx context.Context, env *Env, r *Result) error {
	state := env.state.(*churnState)
	timeout := env.Config.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return state.gone.pending() == 0, nil
	})
	if err != nil {
		return fmt.Errorf("churn: %d deleted objects still there: %w", state.gone.pending(), err)
	}
	r.ClaimDeleteToGone = state.gone.samples("claim/")
	r.VolumeDeleteToGone = state.gone.samples("volume/")
	r.ChurnLoop = state.loop
	return nil
}

// waitSetupBound polls until the N setup claims are Bound (the run's timeout, or 10 minutes).
func waitSetupBound(ctx context.Context, env *Env) error {
	cfg := env.Config
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	selector := metav1.ListOptions{LabelSelector: "loadgen=" + cfg.Prefix + "," + phaseLabel + "=" + phaseSetup}
	bound := 0
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := env.Client.CoreV1().PersistentVolumeClaims(cfg.Namespace).List(ctx, selector)
		if err != nil {
			return false, nil // a busy apiserver: ask again
		}
		bound = 0
		for _, c := range list.Items {
			if c.Status.Phase == v1.ClaimBound {
				bound++
			}
		}
		return bound == cfg.Count, nil
	})
	if err != nil {
		return fmt.Errorf("churn: %d of %d setup claims Bound: %w", bound, cfg.Count, err)
	}
	return nil
}

// goneTracker pairs delete calls with the DELETED events that follow them. Keys are
// "claim/<name>" and "volume/<name>".
type goneTracker struct {
	mu      sync.Mutex
	deleted map[string]time.Time
	gone    map[string]time.Time
	waiters map[string]chan struct{}
}

// trackGone watches the run's claims and volumes for deletions from now until ctx is done.
func trackGone(ctx context.Context, env *Env) (*goneTracker, error) {
	g := &goneTracker{deleted: map[string]time.Time{}, gone: map[string]time.Time{}, waiters: map[string]chan struct{}{}}
	cfg := env.Config
	factory := informers.NewSharedInformerFactoryWithOptions(env.Client, 0, informers.WithNamespace(cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "loadgen=" + cfg.Prefix }))
	claims := factory.Core().V1().PersistentVolumeClaims().Informer()
	volumes := factory.Core().V1().PersistentVolumes().Informer()
	onDelete := func(kind string) func(any) {
		return func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if m, ok := obj.(metav1.Object); ok {
				g.observe(kind + "/" + m.GetName())
			}
		}
	}
	if _, err := claims.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: onDelete("claim")}); err != nil {
		return nil, err
	}
	if _, err := volumes.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: onDelete("volume")}); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), claims.HasSynced, volumes.HasSynced) {
		return nil, fmt.Errorf("churn: claim and volume informers did not sync")
	}
	return g, nil
}

// deleting records the delete call for key and returns a channel closed once key is gone.
func (g *goneTracker) deleting(key string) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch := make(chan struct{})
	g.deleted[key] = time.Now()
	delete(g.gone, key)
	g.waiters[key] = ch
	return ch
}

func (g *goneTracker) observe(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch, waiting := g.waiters[key]
	if !waiting {
		return // not deleted by the run (or seen gone already)
	}
	g.gone[key] = time.Now()
	close(ch)
	delete(g.waiters, key)
}

// pending counts the deletes whose objects are still there.
func (g *goneTracker) pending() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiters)
}

// samples returns delete -> gone for the keys with prefix, sorted by latency.
func (g *goneTracker) samples(prefix string) []Sample {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []Sample
	for key, at := range g.gone {
		if name, ok := strings.CutPrefix(key, prefix); ok {
			out = append(out, Sample{Claim: name, Latency: at.Sub(g.deleted[key])})
		}
	}
	slices.SortFunc(out, func(a, b Sample) int { return int(a.Latency - b.Latency) })
	return out
}
