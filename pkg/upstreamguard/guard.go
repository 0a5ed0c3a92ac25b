package upstreamguard

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/fastpv/pv-controller-manager/pkg/kcmargs"
)

const (
	// DefaultNamespace and DefaultSelector find kubeadm's KCM mirror pods.
	DefaultNamespace = "kube-system"
	DefaultSelector  = "component=kube-controller-manager"
	// ReasonUpstreamBinderActive is the Warning event's reason, on the KCM pod.
	ReasonUpstreamBinderActive = "UpstreamBinderActive"
)

var (
	activeGauge = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "pv_controller",
		Name:           "upstream_binder_active",
		Help:           "1 while a kube-controller-manager pod runs its own PersistentVolume binder (pv-controller-manager then does not write unless --allow-upstream-binder), else 0.",
		StabilityLevel: metrics.ALPHA,
	})
	registerOnce sync.Once
)

// Config of a Guard.
type Config struct {
	Client    kubernetes.Interface
	Namespace string
	Selector  labels.Selector
	Recorder  record.EventRecorder
	// CheckPeriod re-evaluates the cached pods periodically (on top of every pod event).
	CheckPeriod time.Duration
	// AllowCoexistence reports and warns but never holds writes (--allow-upstream-binder).
	AllowCoexistence bool
	// LeaseName is KCM's leader-election Lease in Namespace; when set, only the KCM pod that holds
	// it counts (binderPods). Empty: every KCM pod with the binder enabled counts.
	LeaseName string
	// clock tells the time and runs the Lease expiry re-check: the real one, a fake one in tests.
	clock clock.WithDelayedExecution
}

// Guard tracks whether KCM runs its binder. The zero state is "unknown", which holds writes too:
// nothing is written before the first look at KCM's pods.
type Guard struct {
	cfg Config

	mu     sync.Mutex
	known  bool
	active []string // "namespace/name" of KCM pods running the binder
	leader string   // KCM's Lease holder when it decided, else ""
	// lastRenew and renewObserved: the KCM Lease's renewTime and when we first saw it (LiveHolder).
	lastRenew     time.Time
	renewObserved time.Time
	expiry        clock.Timer // re-evaluates when the holder's Lease would expire
	warned        map[types.UID]bool
	changed       chan struct{} // closed and replaced on every change of known/active
	stopping      chan struct{}
	wake          chan struct{}
}

// New returns a Guard; Run starts it.
func New(cfg Config) *Guard {
	registerOnce.Do(func() { legacyregistry.MustRegister(activeGauge) })
	if cfg.clock == nil {
		cfg.clock = clock.RealClock{}
	}
	return &Guard{cfg: cfg, warned: map[types.UID]bool{}, changed: make(chan struct{}), stopping: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// Run watches KCM's pods until ctx is done. Writes held by WrapTransport fail once ctx is done.
func (g *Guard) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("upstream-binder-guard")
	defer close(g.stopping)
	defer func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.expiry != nil {
			g.expiry.Stop()
		}
	}()
	factory := informers.NewSharedInformerFactoryWithOptions(g.cfg.Client, 0,
		informers.WithNamespace(g.cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = g.cfg.Selector.String() }))
	podInformer := factory.Core().V1().Pods()
	lister := podInformer.Lister()
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { g.trigger() },
		UpdateFunc: func(any, any) { g.trigger() },
		DeleteFunc: func(any) { g.trigger() },
	}
	_, _ = podInformer.Informer().AddEventHandler(handler)
	synced := []cache.InformerSynced{podInformer.Informer().HasSynced}
	lease := func() (*coordinationv1.Lease, error) { return nil, nil }
	var leaseFactory informers.SharedInformerFactory
	if g.cfg.LeaseName != "" {
		// Only KCM's Lease: our Role may read that one name, not every Lease in kube-system.
		leaseFactory = informers.NewSharedInformerFactoryWithOptions(g.cfg.Client, 0,
			informers.WithNamespace(g.cfg.Namespace),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", g.cfg.LeaseName).String()
			}))
		leaseInformer := leaseFactory.Coordination().V1().Leases()
		_, _ = leaseInformer.Informer().AddEventHandler(handler)
		synced = append(synced, leaseInformer.Informer().HasSynced)
		leaseLister := leaseInformer.Lister().Leases(g.cfg.Namespace)
		lease = func() (*coordinationv1.Lease, error) {
			l, err := leaseLister.Get(g.cfg.LeaseName)
			if errors.IsNotFound(err) {
				return nil, nil
			}
			return l, err
		}
		leaseFactory.Start(ctx.Done())
		defer leaseFactory.Shutdown()
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return
	}
	logger.V(2).Info("Watching kube-controller-manager pods", "namespace", g.cfg.Namespace, "selector", g.cfg.Selector.String(), "lease", g.cfg.LeaseName)
	// Events only ask for an evaluation; one goroutine does them, so decisions are ordered.
	evaluate := func() { g.evaluate(logger, lister.Pods(g.cfg.Namespace), lease) }
	evaluate()
	period := g.cfg.CheckPeriod
	if period <= 0 {
		period = time.Minute
	}
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			evaluate()
		case <-g.wake:
			evaluate()
		}
	}
}

// trigger asks Run's loop for an evaluation (coalesced).
func (g *Guard) trigger() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

type podLister interface {
	List(selector labels.Selector) ([]*corev1.Pod, error)
}

func (g *Guard) evaluate(logger klog.Logger, pods podLister, getLease func() (*coordinationv1.Lease, error)) {
	list, err := pods.List(g.cfg.Selector)
	if err != nil {
		logger.Error(err, "Listing kube-controller-manager pods from the cache")
		return
	}
	lease, err := getLease()
	if err != nil {
		logger.Error(err, "Reading kube-controller-manager's Lease from the cache", "lease", g.cfg.LeaseName)
		return
	}
	now := g.cfg.clock.Now()
	var active []string
	var newlyActive []*corev1.Pod
	g.mu.Lock()
	if lease != nil && lease.Spec.RenewTime != nil && !lease.Spec.RenewTime.Time.Equal(g.lastRenew) {
		g.lastRenew, g.renewObserved = lease.Spec.RenewTime.Time, now
	}
	binders, leader := binderPods(list, lease, now, g.renewObserved)
	if leader != "" {
		// No event marks a Lease's expiry; look again then, when any standby may take over.
		_, age, _ := LiveHolder(lease, now, g.renewObserved)
		g.scheduleExpiry(leaseDuration(lease) - age + time.Second)
	}
	seen := map[types.UID]bool{}
	for _, pod := range binders {
		controllers, _ := BinderControllers(pod)
		active = append(active, pod.Namespace+"/"+pod.Name)
		seen[pod.UID] = true
		if !g.warned[pod.UID] {
			g.warned[pod.UID] = true
			newlyActive = append(newlyActive, pod)
			logger.Error(nil, "kube-controller-manager runs its own PersistentVolume binder; two binders double the writes and conflict",
				"pod", klog.KObj(pod), "controllers", controllers, "holdingWrites", !g.cfg.AllowCoexistence)
		}
	}
	for uid := range g.warned {
		if !seen[uid] {
			delete(g.warned, uid) // warn again if it comes back
		}
	}
	slices.Sort(active)
	changed := !g.known || !slices.Equal(active, g.active)
	if leader != g.leader {
		logger.V(2).Info("kube-controller-manager's Lease holder", "holder", leader, "binderPods", active)
	}
	wasActive := len(g.active) > 0
	g.known, g.active, g.leader = true, active, leader
	// The gauge moves with g.active, under the lock: whoever sees Active() sees the same gauge.
	if len(active) > 0 {
		activeGauge.Set(1)
	} else {
		activeGauge.Set(0)
	}
	if changed {
		close(g.changed)
		g.changed = make(chan struct{})
	}
	g.mu.Unlock()

	if len(active) == 0 && wasActive {
		logger.Info("kube-controller-manager no longer runs its PersistentVolume binder; binding resumes")
	}
	for _, pod := range newlyActive {
		if g.cfg.Recorder != nil {
			action := "pv-controller-manager holds its writes until it stops"
			if g.cfg.AllowCoexistence {
				action = "pv-controller-manager binds too (--allow-upstream-binder)"
			}
			g.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, ReasonUpstreamBinderActive,
				"kube-controller-manager runs its PersistentVolume binder; %s. Add -%s to its --controllers (deploy/rollout.sh enable).",
				action, kcmargs.BinderController)
		}
	}
}

// scheduleExpiry arranges one evaluation after d (g.mu held).
func (g *Guard) scheduleExpiry(d time.Duration) {
	if g.expiry == nil {
		g.expiry = g.cfg.clock.AfterFunc(d, g.trigger)
		return
	}
	g.expiry.Reset(d)
}

// BinderControllers tells whether a live pod runs kube-controller-manager with its binder, and
// returns its --controllers entries.
func BinderControllers(pod *corev1.Pod) (string, bool) {
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return "", false
	}
	for _, c := range pod.Spec.Containers {
		args, ok := kcmargs.ContainerArgs(c.Command, c.Args, c.Name)
		if !ok {
			continue
		}
		if kcmargs.BinderEnabled(args) {
			controllers, _ := kcmargs.Controllers(args)
			return strings.Join(controllers, ","), true
		}
	}
	return "", false
}

// Active returns the KCM pods that run the binder; known is false before the first look.
func (g *Guard) Active() (pods []string, known bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.active), g.known
}

// Holding tells whether writes are held now, and returns a channel closed at the next change.
func (g *Guard) holding() (bool, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cfg.AllowCoexistence {
		return false, g.changed
	}
	return !g.known || len(g.active) > 0, g.changed
}

// Check is a readiness check: not ready while writes are held.
func (g *Guard) Check(*http.Request) error {
	if held, _ := g.holding(); held {
		pods, known := g.Active()
		if !known {
			return fmt.Errorf("kube-controller-manager pods not looked at yet")
		}
		return fmt.Errorf("kube-controller-manager runs its PersistentVolume binder (%s); binder writes are held", strings.Join(pods, ", "))
	}
	return nil
}

// WaitUntilClear blocks until writes are not held, or ctx is done.
func (g *Guard) WaitUntilClear(ctx context.Context) error {
	for {
		held, changed := g.holding()
		if !held {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-g.stopping:
			return fmt.Errorf("upstream-binder guard stopped")
		case <-changed:
		}
	}
}

// WrapTransport holds every request that may write (anything but GET, HEAD, OPTIONS) while KCM
// runs its binder. Reads go through, so the binder's caches stay current and it resumes at once.
func (g *Guard) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		switch req.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if err := g.WaitUntilClear(req.Context()); err != nil {
				return nil, fmt.Errorf("write held while kube-controller-manager runs its PersistentVolume binder: %w", err)
			}
		}
		return rt.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
