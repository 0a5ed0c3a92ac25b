package loadgen

import (
	"cmp"
	"context"
	"errors"
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
)

// Scenario names.
const (
	ScenarioPrebound = "prebound"
	ScenarioPVCFirst = "pvc-first"
	ScenarioMatched  = "matched"
	// ScenarioClaimRef: each PV reserves its claim by spec.claimRef (namespace and name, as the
	// Kubernetes docs teach operators; external-provisioner and kube-scheduler write the same),
	// and the claim has no volumeName.
	ScenarioClaimRef = "claimref"
)

// Orders in which prebound and claimref create each pair (Config.Order).
const (
	OrderPVFirst    = "pv-first"    // the PV, then its claim (the default)
	OrderClaimFirst = "claim-first" // the claim, then its PV
	OrderTogether   = "together"    // both at once, from two goroutines
)

// Config describes one run.
type Config struct {
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
	// or OrderTogether.
	Order string
	// Timeout bounds the wait for all claims to be Bound.
	Timeout time.Duration
	// Progress, if set, receives a progress line about every 500 ms.
	Progress io.Writer
}

// Sample is one claim's measurement.
type Sample struct {
	Claim   string        `json:"claim"`
	Latency time.Duration `json:"latencyNs"`
}

// Result is what Run measured.
type Result struct {
	Scenario string `json:"scenario"`
	// Order is Config.Order of prebound and claimref runs.
	Order string `json:"order,omitempty"`
	Count int    `json:"count"`
	// Samples, sorted by latency, for the claims that became Bound.
	Samples []Sample `json:"samples"`
	// TimeToAllBound is from the first create call to the last claim Bound.
	TimeToAllBound time.Duration `json:"timeToAllBoundNs"`
	// Unbound counts the claims not Bound when Timeout expired.
	Unbound int `json:"unbound"`
	// PodScheduled (wffc): pod create call to spec.nodeName set, sorted, for the scheduled pods.
	PodScheduled []Sample `json:"podScheduled,omitempty"`
	// VolumeReserved (wffc): pod create call to the scheduler's write of the PV's claimRef.
	VolumeReserved []Sample `json:"volumeReserved,omitempty"`
}

// Percentile returns the p-th percentile (0 < p <= 100) of the bound claims' latencies.
func (r *Result) Percentile(p float64) time.Duration {
	if len(r.Samples) == 0 {
		return 0
	}
	i := int(float64(len(r.Samples))*p/100+0.5) - 1
	i = max(0, min(i, len(r.Samples)-1))
	return r.Samples[i].Latency
}

// Summary is one line with p50/p90/p99/max and time to all bound (and, for wffc, a second line:
// pod create to scheduled).
func (r *Result) Summary() string {
	if len(r.PodScheduled) > 0 {
		p := &Result{Samples: r.PodScheduled}
		return r.bindSummary() + fmt.Sprintf("\n%s: %d/%d pods scheduled; pod->scheduled p50 %s p90 %s p99 %s max %s",
			r.Scenario, len(r.PodScheduled), r.Count, p.Percentile(50).Round(time.Millisecond), p.Percentile(90).Round(time.Millisecond),
			p.Percentile(99).Round(time.Millisecond), p.Percentile(100).Round(time.Millisecond))
	}
	return r.bindSummary()
}

func (r *Result) bindSummary() string {
	return fmt.Sprintf("%s: %d/%d bound; claim->Bound p50 %s p90 %s p99 %s max %s; all bound after %s",
		r.Scenario, len(r.Samples), r.Count,
		r.Percentile(50).Round(time.Millisecond), r.Percentile(90).Round(time.Millisecond),
		r.Percentile(99).Round(time.Millisecond), r.Percentile(100).Round(time.Millisecond),
		r.TimeToAllBound.Round(time.Millisecond))
}

func (c *Config) name(i int) string { return fmt.Sprintf("%s-%05d", c.Prefix, i) }

// Volume returns the i-th volume of the run. The pvc-first and prebound claims name it; in the
// claimref scenario it reserves the i-th claim.
func (c *Config) Volume(i int) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
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
	if c.Scenario == ScenarioClaimRef {
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace, Name: c.name(i)}
	}
	return pv
}

// Claim returns the i-th claim; it names its volume unless the scenario is matched or claimref.
func (c *Config) Claim(i int) *v1.PersistentVolumeClaim {
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: c.name(i), Namespace: c.Namespace, Labels: map[string]string{"loadgen": c.Prefix}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(""),
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	switch c.Scenario {
	case ScenarioMatched, ScenarioClaimRef:
	case ScenarioProvisioning:
		claim.Spec.StorageClassName = ptr.To(c.StorageClassName())
	case ScenarioWFFC:
		claim.Spec.StorageClassName = ptr.To(c.LocalClassName())
	default:
		claim.Spec.VolumeName = c.name(i)
	}
	return claim
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
	switch cfg.Order {
	case "", OrderPVFirst:
	case OrderClaimFirst, OrderTogether:
		if cfg.Scenario != ScenarioPrebound && cfg.Scenario != ScenarioClaimRef {
			return nil, fmt.Errorf("loadgen: order %q applies to the %s and %s scenarios only, not %q", cfg.Order, ScenarioPrebound, ScenarioClaimRef, cfg.Scenario)
		}
	default:
		return nil, fmt.Errorf("loadgen: unknown order %q (want %s, %s or %s)", cfg.Order, OrderPVFirst, OrderClaimFirst, OrderTogether)
	}
	tracker := newBindTracker(cfg.Count)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := tracker.watch(watchCtx, client, cfg.Namespace, cfg.Prefix); err != nil {
		return nil, err
	}

	start := time.Now()
	var err error
	var pods *podTracker  // wffc: when each pod was scheduled
	var prov *provisioner // provisioning: pv-load's stand-in for external-provisioner
	switch cfg.Scenario {
	case ScenarioPrebound, ScenarioClaimRef:
		err = forEach(ctx, cfg.Count, cfg.Concurrency, func(i int) error {
			if err := createPair(ctx, client, cfg, i, tracker); err != nil {
				return err
			}
			if cfg.WithPods {
				_, err := client.CoreV1().Pods(cfg.Namespace).Create(ctx, cfg.Pod(i), metav1.CreateOptions{})
				return err
			}
			return nil
		})
	case ScenarioPVCFirst:
		err = forEach(ctx, cfg.Count, cfg.Concurrency, func(i int) error { return createClaim(ctx, client, cfg.Claim(i)) })
		if err == nil {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(cfg.PVDelay):
			}
			start = time.Now()
			err = forEach(ctx, cfg.Count, cfg.Concurrency, func(i int) error {
				tracker.started(cfg.name(i), time.Now())
				return createVolume(ctx, client, cfg.Volume(i))
			})
		}
	case ScenarioProvisioning:
		if err = ensureStorageClass(ctx, client, &cfg); err != nil {
			return nil, err
		}
		if prov, err = startProvisioner(watchCtx, client, &cfg, cfg.Concurrency); err != nil {
			return nil, err
		}
		start = time.Now()
		err = forEach(ctx, cfg.Count, cfg.Concurrency, func(i int) error {
			tracker.started(cfg.name(i), time.Now())
			return createClaim(ctx, client, cfg.Claim(i))
		})
	case ScenarioWFFC:
		var hostnames []string
		if hostnames, err = schedulableHostnames(ctx, client, cfg.Nodes); err != nil {
			return nil, err
		}
		if err = ensureLocalStorageClass(ctx, client, &cfg); err != nil {
			return nil, err
		}
		if pods, err = trackScheduledPods(watchCtx, client, &cfg); err != nil {
			return nil, err
		}
		err = forEach(ctx, cfg.Count, cfg.Concurrency, func(i int) error {
			return createVolume(ctx, client, cfg.LocalVolume(i, hostnames[i%len(hostnames)]))
		})
		if err == nil {
			start = time.Now()
			err = forEach(ctx, cfg.Count, cfg.Concurrency, func(i int) error {
				if err := createClaim(ctx, client, cfg.Claim(i)); err != nil {
					return err
				}
				tracker.started(cfg.name(i), time.Now())
				_, err := client.CoreV1().Pods(cfg.Namespace).Create(ctx, cfg.Pod(i), metav1.CreateOptions{})
				return err
			})
		}
	case ScenarioMatched:
		err = forEach(ctx, cfg.Count, cfg.Concurrency, func(i int) error { return createVolume(ctx, client, cfg.Volume(i)) })
		if err == nil {
			start = time.Now()
			err = forEach(ctx, cfg.Count, cfg.Concurrency, func(i int) error {
				tracker.started(cfg.name(i), time.Now())
				return createClaim(ctx, client, cfg.Claim(i))
			})
		}
	default:
		return nil, fmt.Errorf("loadgen: unknown scenario %q (want %s, %s, %s, %s, %s or %s)", cfg.Scenario, ScenarioPrebound, ScenarioClaimRef, ScenarioPVCFirst, ScenarioMatched, ScenarioProvisioning, ScenarioWFFC)
	}
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
	if prov != nil {
		if err := prov.failure(); err != nil {
			return nil, err // the claims it failed left unbound say nothing about the binder
		}
	}
	if pods != nil {
		// The binder's part ends at Bound; the scheduler then notices it (it polls) and binds the pod.
		deadline := time.Now().Add(cfg.Timeout)
		for len(pods.samples(tracker.startedCopy())) < len(r.Samples) && time.Now().Before(deadline) && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
		r.PodScheduled = pods.samples(tracker.startedCopy())
		r.VolumeReserved = pods.reservedSamples(tracker.startedCopy())
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

func createVolume(ctx context.Context, client clientset.Interface, pv *v1.PersistentVolume) error {
	_, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	return err
}

func createClaim(ctx context.Context, client clientset.Interface, pvc *v1.PersistentVolumeClaim) error {
	_, err := client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Create(ctx, pvc, metav1.CreateOptions{})
	return err
}

// forEach runs fn(1..n) on `workers` goroutines and returns the first error.
// createPair creates the i-th PV and claim in cfg.Order. A claim's latency counts from its own
// create call, or, when both are sent at once, from the first of the two.
func createPair(ctx context.Context, client clientset.Interface, cfg Config, i int, tracker *bindTracker) error {
	switch cfg.Order {
	case OrderClaimFirst:
		tracker.started(cfg.name(i), time.Now())
		if err := createClaim(ctx, client, cfg.Claim(i)); err != nil {
			return err
		}
		return createVolume(ctx, client, cfg.Volume(i))
	case OrderTogether:
		tracker.started(cfg.name(i), time.Now())
		volumeErr := make(chan error, 1)
		go func() { volumeErr <- createVolume(ctx, client, cfg.Volume(i)) }()
		claimErr := createClaim(ctx, client, cfg.Claim(i))
		return errors.Join(claimErr, <-volumeErr)
	default:
		if err := createVolume(ctx, client, cfg.Volume(i)); err != nil {
			return err
		}
		tracker.started(cfg.name(i), time.Now())
		return createClaim(ctx, client, cfg.Claim(i))
	}
}

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
	return watchClaims(ctx, client, namespace, "loadgen="+prefix, func(claim *v1.PersistentVolumeClaim, at time.Time) {
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
	if cfg.Scenario == ScenarioPrebound || cfg.Scenario == ScenarioClaimRef {
		r.Order = cmp.Or(cfg.Order, OrderPVFirst)
	}
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
// For pre-bound scenarios (prebound, pvc-first, claimref) each claim must have its own volume.
func Verify(ctx context.Context, client clientset.Interface, cfg Config) error {
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
		case cfg.Scenario == ScenarioProvisioning && claim.Spec.VolumeName != "pvc-"+string(claim.UID):
			problems = append(problems, fmt.Sprintf("claim %s is bound to %s, not to the volume provisioned for it", claim.Name, claim.Spec.VolumeName))
		case cfg.Scenario != ScenarioMatched && cfg.Scenario != ScenarioProvisioning && cfg.Scenario != ScenarioWFFC && claim.Spec.VolumeName != claim.Name:
			problems = append(problems, fmt.Sprintf("claim %s is bound to %s, not to its own volume", claim.Name, claim.Spec.VolumeName))
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
