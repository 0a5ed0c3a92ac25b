package loadgen

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/fastpv/pv-controller-manager/test/harness/loadgen/result"
)

// Config describes one run.
type Config struct {
	// Scenario is a registered scenario's name (Names()).
	Scenario    string
	Namespace   string
	Prefix      string // object names are Prefix-00001 ...
	Count       int
	Concurrency int
	// PVDelay is how long pvc-first waits after the last claim before creating the volumes.
	PVDelay time.Duration
	// WithPods also creates one Pod per claim (prebound scenario), scheduled on any node.
	WithPods bool
	// Nodes (wffc) is how many schedulable nodes to wait for before spreading the PVs over them
	// (0: at least one).
	Nodes int
	// Order is how prebound and claimref create each pair: OrderPVFirst ("" too), OrderClaimFirst
	// or OrderTogether; the same as naming the scenario prebound-claim-first, ...
	Order string
	// Timeout bounds the wait for all claims to be Bound.
	Timeout time.Duration
	// Progress, if set, receives a progress line about every 500 ms.
	Progress io.Writer
}

// Sample is one claim's measurement; Result is what Run measured (package result, which the
// benchmark report reads too).
type (
	Sample = result.Sample
	Result = result.Result
)

func (c *Config) name(i int) string { return fmt.Sprintf("%s-%05d", c.Prefix, i) }

// Volume returns the i-th volume of the run, as its scenario shapes it (Scenario.Shape).
func (c *Config) Volume(i int) *v1.PersistentVolume {
	_, volume := c.objects(i)
	return volume
}

// Claim returns the i-th claim of the run, as its scenario shapes it.
func (c *Config) Claim(i int) *v1.PersistentVolumeClaim {
	claim, _ := c.objects(i)
	return claim
}

func (c *Config) objects(i int) (*v1.PersistentVolumeClaim, *v1.PersistentVolume) {
	volume := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: c.name(i), Labels: map[string]string{"loadgen": c.Prefix}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			PersistentVolumeSource: v1.PersistentVolumeSource{
				HostPath: &v1.HostPathVolumeSource{Path: "/tmp/" + c.name(i)},
			},
		},
	}
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: c.name(i), Namespace: c.Namespace, Labels: map[string]string{"loadgen": c.Prefix}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(""),
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if s, err := c.scenario(); err == nil {
		s.Shape(c, i, claim, volume)
	}
	return claim, volume
}

// scenario resolves Scenario and Order to a registered scenario.
func (c *Config) scenario() (Scenario, error) {
	switch c.Order {
	case "", OrderPVFirst:
		return Lookup(c.Scenario)
	case OrderClaimFirst, OrderTogether:
		if c.Scenario != ScenarioPrebound && c.Scenario != ScenarioClaimRef {
			return nil, fmt.Errorf("loadgen: order %q applies to the %s and %s scenarios only, not %q", c.Order, ScenarioPrebound, ScenarioClaimRef, c.Scenario)
		}
		return Lookup(c.Scenario + "-" + c.Order)
	}
	return nil, fmt.Errorf("loadgen: unknown order %q (want %s, %s or %s)", c.Order, OrderPVFirst, OrderClaimFirst, OrderTogether)
}

// Pod returns the i-th pod, which mounts the i-th claim.
func (c *Config) Pod(i int) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: c.name(i), Namespace: c.Namespace, Labels: map[string]string{"loadgen": c.Prefix}},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
				VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c.name(i)}}}},
			// kwok nodes carry this taint; real nodes ignore the toleration.
			Tolerations: []v1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}},
		},
	}
}

// Run creates the workload and waits until every claim is Bound or Timeout expires.
func Run(ctx context.Context, client clientset.Interface, cfg Config) (*Result, error) {
	if cfg.Count <= 0 || cfg.Concurrency <= 0 || cfg.Namespace == "" || cfg.Prefix == "" {
		return nil, fmt.Errorf("loadgen: count, concurrency, namespace and prefix are required")
	}
	scenario, err := cfg.scenario()
	if err != nil {
		return nil, err
	}
	tracker := newBindTracker(cfg.Count)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := tracker.watch(watchCtx, client, cfg.Namespace, cfg.Prefix); err != nil {
		return nil, err
	}
	env := &Env{Client: client, Config: &cfg, Watch: watchCtx, tracker: tracker}
	start, err := scenario.Create(ctx, env)
	if err != nil {
		return nil, err
	}

	waitCtx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	ticker := time.NewTicker(500 * time.Millisecond)
	defer ticker.Stop()
	for done := false; !done; {
		select {
		case <-tracker.allBound:
			done = true
		case <-waitCtx.Done():
			done = true
		case <-ticker.C:
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "\r%s %s", progressBar(int(tracker.count.Load()), cfg.Count), time.Since(start).Round(100*time.Millisecond))
			}
		}
	}
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "\r%s %s\n", progressBar(int(tracker.count.Load()), cfg.Count), time.Since(start).Round(100*time.Millisecond))
	}
	r := tracker.result(cfg, start)
	r.Scenario = scenario.Name()
	if l, ok := scenario.(interface{ labels() (string, string) }); ok {
		r.Scenario, r.Order = l.labels()
	}
	r.WritesAfterStart = scenario.WritesAfterStart(cfg.Count)
	if err := scenario.Finish(ctx, env, r); err != nil {
		return nil, err
	}
	return r, nil
}

func progressBar(done, total int) string {
	const width = 40
	filled := width * done / max(total, 1)
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '.'
		if i < filled {
			bar[i] = '#'
		}
	}
	return fmt.Sprintf("[%s] %d/%d bound", bar, done, total)
}

// forEach runs fn(1..n) on `workers` goroutines and returns the first error.
func forEach(ctx context.Context, n, workers int, fn func(i int) error) error {
	next := atomic.Int64{}
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > n || ctx.Err() != nil {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

// bindTracker records, from a watch on the claims, when each claim is first seen Bound.
type bindTracker struct {
	lock     sync.Mutex
	start    map[string]time.Time
	bound    map[string]time.Time
	expected int
	count    atomic.Int64
	allBound chan struct{}
}

func newBindTracker(expected int) *bindTracker {
	return &bindTracker{start: map[string]time.Time{}, bound: map[string]time.Time{}, expected: expected, allBound: make(chan struct{})}
}

func (t *bindTracker) startedCopy() map[string]time.Time {
	t.lock.Lock()
	defer t.lock.Unlock()
	out := make(map[string]time.Time, len(t.start))
	for k, v := range t.start {
		out[k] = v
	}
	return out
}

func (t *bindTracker) started(name string, at time.Time) {
	t.lock.Lock()
	defer t.lock.Unlock()
	t.start[name] = at
}

func (t *bindTracker) observe(claim *v1.PersistentVolumeClaim, at time.Time) {
	if claim.Status.Phase != v1.ClaimBound {
		return
	}
	t.lock.Lock()
	defer t.lock.Unlock()
	if _, seen := t.bound[claim.Name]; seen {
		return
	}
	t.bound[claim.Name] = at
	if int(t.count.Add(1)) == t.expected {
		close(t.allBound)
	}
}

func (t *bindTracker) watch(ctx context.Context, client clientset.Interface, namespace, prefix string) error {
	// A scenario's setup claims (churn) are not the run's: their binds are not measured.
	return watchClaims(ctx, client, namespace, "loadgen="+prefix+","+phaseLabel+"!="+phaseSetup, func(claim *v1.PersistentVolumeClaim, at time.Time) {
		if claim.Labels[phaseLabel] == phaseSetup {
			return // the selector says so too; fake clientsets do not filter watches by it
		}
		t.observe(claim, at)
	})
}

// watchClaims calls handle for every claim added or changed in namespace that matches selector,
// from now until ctx is done. The first watch is set up before it returns.
func watchClaims(ctx context.Context, client clientset.Interface, namespace, selector string, handle func(*v1.PersistentVolumeClaim, time.Time)) error {
	w, err := client.CoreV1().PersistentVolumeClaims(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("watching claims: %w", err)
	}
	go func() {
		lastRV := ""
		for {
			lastRV = consumeClaims(ctx, w, lastRV, handle)
			if ctx.Err() != nil {
				return
			}
			// The watch closed (timeout, or an overloaded apiserver on a long run): resume from the
			// last event seen, so nothing is missed and nothing is observed twice; retry until it
			// works. If that version is too old (410), start over: handlers see current objects
			// again and must ignore what they have seen.
			for {
				opts := metav1.ListOptions{LabelSelector: selector, ResourceVersion: lastRV, AllowWatchBookmarks: true}
				w, err = client.CoreV1().PersistentVolumeClaims(namespace).Watch(ctx, opts)
				if err == nil {
					break
				}
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					lastRV = ""
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(200 * time.Millisecond):
				}
			}
		}
	}()
	return nil
}

// consumeClaims reads w until it closes or ctx is done and returns the last resourceVersion seen.
func consumeClaims(ctx context.Context, w watch.Interface, lastRV string, handle func(*v1.PersistentVolumeClaim, time.Time)) string {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return lastRV
		case ev, ok := <-w.ResultChan():
			if !ok {
				return lastRV
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				if claim, ok := ev.Object.(*v1.PersistentVolumeClaim); ok {
					handle(claim, time.Now())
					lastRV = claim.ResourceVersion
				}
			case watch.Bookmark:
				if claim, ok := ev.Object.(*v1.PersistentVolumeClaim); ok {
					lastRV = claim.ResourceVersion
				}
			case watch.Error:
				return "" // e.g. 410 Gone inside the stream: start over
			}
		}
	}
}

func (t *bindTracker) result(cfg Config, firstCreate time.Time) *Result {
	t.lock.Lock()
	defer t.lock.Unlock()
	r := &Result{Scenario: cfg.Scenario, Count: cfg.Count}
	var last time.Time
	for name, at := range t.bound {
		started, ok := t.start[name]
		if !ok {
			continue
		}
		latency := max(at.Sub(started), 0)
		r.Samples = append(r.Samples, Sample{Claim: name, Latency: latency})
		if at.After(last) {
			last = at
		}
	}
	slices.SortFunc(r.Samples, func(a, b Sample) int { return int(a.Latency - b.Latency) })
	r.Unbound = cfg.Count - len(r.Samples)
	if !last.IsZero() {
		r.TimeToAllBound = last.Sub(firstCreate)
	}
	return r
}

// Verify checks the final state: every claim of the run is Bound to exactly one volume, every
// volume of the run is Bound to exactly one claim, and the two sides agree (claimRef UID too).
// The scenario checks the rest (Scenario.CheckBind): for pre-bound ones, each claim has its own volume.
func Verify(ctx context.Context, client clientset.Interface, cfg Config) error {
	scenario, err := cfg.scenario()
	if err != nil {
		return err
	}
	selector := metav1.ListOptions{LabelSelector: "loadgen=" + cfg.Prefix}
	pvcs, err := client.CoreV1().PersistentVolumeClaims(cfg.Namespace).List(ctx, selector)
	if err != nil {
		return err
	}
	pvs, err := client.CoreV1().PersistentVolumes().List(ctx, selector)
	if err != nil {
		return err
	}
	volumes := map[string]*v1.PersistentVolume{}
	for i := range pvs.Items {
		volumes[pvs.Items[i].Name] = &pvs.Items[i]
	}
	claimsOfVolume := map[string]int{}
	var problems []string
	for i := range pvcs.Items {
		claim := &pvcs.Items[i]
		pv, ok := volumes[claim.Spec.VolumeName]
		switch {
		case claim.Status.Phase != v1.ClaimBound:
			problems = append(problems, fmt.Sprintf("claim %s is %s", claim.Name, claim.Status.Phase))
		case !ok:
			problems = append(problems, fmt.Sprintf("claim %s names volume %q that is not part of the run", claim.Name, claim.Spec.VolumeName))
		case pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != claim.Name || pv.Spec.ClaimRef.Namespace != claim.Namespace || pv.Spec.ClaimRef.UID != claim.UID:
			problems = append(problems, fmt.Sprintf("claim %s names volume %s whose claimRef is %v", claim.Name, pv.Name, pv.Spec.ClaimRef))
		default:
			if problem := scenario.CheckBind(&cfg, claim); problem != "" {
				problems = append(problems, problem)
			}
		}
		claimsOfVolume[claim.Spec.VolumeName]++
	}
	for name, n := range claimsOfVolume {
		if name != "" && n > 1 {
			problems = append(problems, fmt.Sprintf("volume %s is named by %d claims", name, n))
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return fmt.Errorf("%d binding problems, first: %v", len(problems), problems[:min(5, len(problems))])
	}
	return nil
}

// Cleanup deletes the run's claims, pods and volumes and waits until the volumes are gone.
func Cleanup(ctx context.Context, client clientset.Interface, cfg Config) error {
	selector := metav1.ListOptions{LabelSelector: "loadgen=" + cfg.Prefix}
	grace := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	if err := client.CoreV1().Pods(cfg.Namespace).DeleteCollection(ctx, grace, selector); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := client.CoreV1().PersistentVolumeClaims(cfg.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, selector); err != nil {
		return err
	}
	if err := client.CoreV1().PersistentVolumes().DeleteCollection(ctx, metav1.DeleteOptions{}, selector); err != nil {
		return err
	}
	if err := client.StorageV1().StorageClasses().DeleteCollection(ctx, metav1.DeleteOptions{}, selector); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pvs, err := client.CoreV1().PersistentVolumes().List(ctx, selector)
		return err == nil && len(pvs.Items) == 0, nil
	})
}
