package loadgen

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// ScenarioWFFC: WaitForFirstConsumer local volumes. N local PVs with node affinity, spread over
// the cluster's schedulable nodes (kwok nodes in the benchmark), exist first; then N claims of a
// WaitForFirstConsumer class, without spec.volumeName, each with a pod that mounts it. The real
// kube-scheduler picks a node whose volume fits and writes the PV's claimRef (its PreBind), then
// waits for the binder to bind the claim before it binds the pod. Latency is from the pod's
// create call to the claim Bound; the time to the pod scheduled (spec.nodeName) is reported too.
const ScenarioWFFC = "wffc"

type wffc struct{ base }

func init() { Register(wffc{}) }

func (wffc) Name() string { return ScenarioWFFC }
func (wffc) Help() string {
	return "WaitForFirstConsumer local PVs on the nodes, then claims and a pod each; kube-scheduler picks (--nodes)"
}

func (wffc) Shape(c *Config, _ int, claim *v1.PersistentVolumeClaim, _ *v1.PersistentVolume) {
	claim.Spec.StorageClassName = ptr.To(c.LocalClassName())
}

func (wffc) Create(ctx context.Context, env *Env) (time.Time, error) {
	cfg, client := env.Config, env.Client
	hostnames, err := schedulableHostnames(ctx, client, cfg.Nodes)
	if err != nil {
		return time.Time{}, err
	}
	if err := ensureLocalStorageClass(ctx, client, cfg); err != nil {
		return time.Time{}, err
	}
	pods, err := trackScheduledPods(env.Watch, client, cfg)
	if err != nil {
		return time.Time{}, err
	}
	env.state = pods
	if err := env.ForEach(ctx, func(i int) error {
		return createVolume(ctx, client, cfg.LocalVolume(i, hostnames[i%len(hostnames)]))
	}); err != nil {
		return time.Time{}, err
	}
	start := time.Now()
	return start, env.ForEach(ctx, func(i int) error {
		if err := createClaim(ctx, client, cfg.Claim(i)); err != nil {
			return err
		}
		env.Started(cfg.name(i))
		_, err := client.CoreV1().Pods(cfg.Namespace).Create(ctx, cfg.Pod(i), metav1.CreateOptions{})
		return err
	})
}

// Finish waits for the scheduler to bind the pods of the bound claims (it notices a bind by
// polling) and records when each pod's volume was reserved and when it was scheduled.
func (wffc) Finish(ctx context.Context, env *Env, r *Result) error {
	pods := env.state.(*podTracker)
	started := env.tracker.startedCopy()
	deadline := time.Now().Add(env.Config.Timeout)
	for len(pods.samples(started)) < len(r.Samples) && time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	r.PodScheduled = pods.samples(started)
	r.VolumeReserved = pods.reservedSamples(started)
	return nil
}

// WritesAfterStart: the N claims and N pods (the PVs exist before the clock), the scheduler's N
// claimRef writes, and 4 writes per bind.
func (wffc) WritesAfterStart(n int) int { return 2*n + n + 4*n }

// LocalClassName is the class of the wffc scenario.
func (c *Config) LocalClassName() string { return c.Prefix + "-local" }

// LocalStorageClass: static local volumes, bound when the first pod is scheduled.
func (c *Config) LocalStorageClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: c.LocalClassName(), Labels: map[string]string{"loadgen": c.Prefix}},
		Provisioner:       "kubernetes.io/no-provisioner",
		ReclaimPolicy:     ptr.To(v1.PersistentVolumeReclaimRetain),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
}

// LocalVolume is the i-th local volume, on the node whose kubernetes.io/hostname is hostname.
func (c *Config) LocalVolume(i int, hostname string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: c.name(i), Labels: map[string]string{"loadgen": c.Prefix}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              c.LocalClassName(),
			PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disks/" + c.name(i)}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{hostname}}},
			}}}},
		},
	}
}

// schedulableHostnames lists the kubernetes.io/hostname of the Ready nodes pods can go to (no
// unschedulable flag, no NoSchedule taint but kwok's, which the load's pods tolerate). Nodes of a
// cluster just started may not be Ready yet: it waits up to a minute for at least want of them (at
// least one if want is 0). Spreading the PVs over the first nodes to turn Ready would crowd them
// past their pod capacity.
func schedulableHostnames(ctx context.Context, client clientset.Interface, want int) ([]string, error) {
	var out []string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		out = nil
		for _, n := range nodes.Items {
			if schedulable(&n) {
				out = append(out, n.Labels[v1.LabelHostname])
			}
		}
		return len(out) >= max(1, want), nil
	})
	if len(out) < max(1, want) {
		return nil, fmt.Errorf("loadgen: %s needs %d Ready, schedulable nodes (with kubernetes.io/hostname); the cluster has %d: %v", ScenarioWFFC, max(1, want), len(out), err)
	}
	slices.Sort(out)
	return out, nil
}

func schedulable(n *v1.Node) bool {
	if n.Spec.Unschedulable || n.Labels[v1.LabelHostname] == "" {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == v1.TaintEffectNoSchedule && t.Key != "kwok.x-k8s.io/node" {
			return false
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// podTracker records, per claim name (pods and claims share names), when the scheduler reserved
// a volume for it (the PV's claimRef written, its PreBind) and when the pod was scheduled
// (spec.nodeName): with the claim's Bound time, that says where a wffc bind's time goes.
type podTracker struct {
	lock      sync.Mutex
	reserved  map[string]time.Time
	scheduled map[string]time.Time
}

func trackScheduledPods(ctx context.Context, client clientset.Interface, cfg *Config) (*podTracker, error) {
	t := &podTracker{reserved: map[string]time.Time{}, scheduled: map[string]time.Time{}}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "loadgen=" + cfg.Prefix }))
	first := func(m map[string]time.Time, name string) {
		t.lock.Lock()
		defer t.lock.Unlock()
		if _, seen := m[name]; !seen {
			m[name] = time.Now()
		}
	}
	pods := factory.Core().V1().Pods().Informer()
	onPod := func(obj any) {
		if pod, ok := obj.(*v1.Pod); ok && pod.Namespace == cfg.Namespace && pod.Spec.NodeName != "" {
			first(t.scheduled, pod.Name)
		}
	}
	volumes := factory.Core().V1().PersistentVolumes().Informer()
	onVolume := func(obj any) {
		if pv, ok := obj.(*v1.PersistentVolume); ok && pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Namespace == cfg.Namespace {
			first(t.reserved, pv.Spec.ClaimRef.Name)
		}
	}
	for _, h := range []struct {
		informer cache.SharedIndexInformer
		fn       func(any)
	}{{pods, onPod}, {volumes, onVolume}} {
		fn := h.fn
		if _, err := h.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: fn, UpdateFunc: func(_, obj any) { fn(obj) }}); err != nil {
			return nil, err
		}
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced, volumes.HasSynced) {
		return nil, fmt.Errorf("loadgen: pod and volume informers did not sync")
	}
	return t, nil
}

// samples returns pod create -> scheduled for the pods started, sorted.
func (t *podTracker) samples(started map[string]time.Time) []Sample {
	return t.since(t.scheduled, started)
}

// reservedSamples returns pod create -> the PV's claimRef written by the scheduler, sorted.
func (t *podTracker) reservedSamples(started map[string]time.Time) []Sample {
	return t.since(t.reserved, started)
}

func (t *podTracker) since(events, started map[string]time.Time) []Sample {
	t.lock.Lock()
	defer t.lock.Unlock()
	var out []Sample
	for name, at := range events {
		if s, ok := started[name]; ok {
			out = append(out, Sample{Claim: name, Latency: max(at.Sub(s), 0)})
		}
	}
	slices.SortFunc(out, func(a, b Sample) int { return int(a.Latency - b.Latency) })
	return out
}

// ensureLocalStorageClass creates the wffc scenario's class unless it exists.
func ensureLocalStorageClass(ctx context.Context, client clientset.Interface, cfg *Config) error {
	_, err := client.StorageV1().StorageClasses().Create(ctx, cfg.LocalStorageClass(), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
