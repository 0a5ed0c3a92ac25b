package election

import (
	"context"
	"errors"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// ErrLeaseLost is returned by Run when the Lease was lost while leading (not given up on shutdown).
var ErrLeaseLost = errors.New("leader election lost")

// Config describes the Lease and its timing.
type Config struct {
	Client        clientset.Interface
	Namespace     string
	Name          string
	Identity      string
	EventRecorder record.EventRecorder
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// WatchDog, if set, is wired to the active elector for /healthz.
	WatchDog *leaderelection.HealthzAdaptor
}

// Run blocks until ctx is done or the Lease is lost. Whenever this process holds the Lease it calls
// lead with a context that ends when ctx ends or the Lease is lost; the Lease is released only after
// lead has returned.
func Run(ctx context.Context, cfg Config, lead func(ctx context.Context)) error {
	logger := klog.FromContext(ctx)
	released := make(chan struct{}, 1)
	stopWatch, err := watchReleases(ctx, cfg, released)
	if err != nil {
		return err
	}
	defer stopWatch()

	for {
		outcome, err := runAttempt(ctx, cfg, lead, released)
		if err != nil {
			return err
		}
		switch outcome {
		case attemptShutdown:
			return nil
		case attemptLost:
			return ErrLeaseLost
		case attemptRetry:
			logger.V(2).Info("Lease was released by its holder, trying to acquire it now", "lease", klog.KRef(cfg.Namespace, cfg.Name))
		}
	}
}

type attemptOutcome int

const (
	attemptShutdown attemptOutcome = iota
	attemptLost
	attemptRetry
)

// runAttempt runs one client-go elector until shutdown, loss, or (while standing by) a release of the
// Lease by its holder, after which a fresh elector tries to acquire at once.
func runAttempt(ctx context.Context, cfg Config, lead func(ctx context.Context), released <-chan struct{}) (attemptOutcome, error) {
	electorCtx, cancelElector := context.WithCancel(klog.NewContext(context.Background(), klog.FromContext(ctx)))
	defer cancelElector()

	var (
		mu       sync.Mutex
		leading  bool
		leadDone = make(chan struct{})
	)
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, cfg.Namespace, cfg.Name,
		cfg.Client.CoreV1(), cfg.Client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: cfg.Identity, EventRecorder: cfg.EventRecorder})
	if err != nil {
		return attemptShutdown, err
	}
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: cfg.LeaseDuration,
		RenewDeadline: cfg.RenewDeadline,
		RetryPeriod:   cfg.RetryPeriod,
		// Safe because cancelElector runs only after lead has returned (or never started).
		ReleaseOnCancel: true,
		Name:            cfg.Name,
		WatchDog:        cfg.WatchDog,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leaderCtx context.Context) {
				mu.Lock()
				leading = true
				mu.Unlock()
				defer close(leadDone)
				runCtx, cancel := context.WithCancel(ctx)
				defer cancel()
				stop := context.AfterFunc(leaderCtx, cancel)
				defer stop()
				lead(runCtx)
			},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return attemptShutdown, err
	}
	isLeading := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return leading
	}

	electorDone := make(chan struct{})
	go func() {
		defer close(electorDone)
		elector.Run(electorCtx)
	}()

	// waitLead waits for lead to return if it was started; only then may the Lease be released.
	waitLead := func() {
		if isLeading() {
			<-leadDone
		}
	}
	for {
		select {
		case <-ctx.Done():
			waitLead()
			cancelElector()
			<-electorDone
			return attemptShutdown, nil
		case <-released:
			if isLeading() {
				continue // our own release notifications are not interesting
			}
			cancelElector()
			<-electorDone
			waitLead() // acquired in the window before the cancel: lead saw a cancelled context
			if ctx.Err() != nil {
				return attemptShutdown, nil
			}
			return attemptRetry, nil
		case <-electorDone:
			// client-go returns on its own only when renewal failed: the Lease is lost.
			waitLead()
			if ctx.Err() != nil {
				return attemptShutdown, nil
			}
			return attemptLost, nil
		}
	}
}

// watchReleases signals released whenever the Lease has no holder (released or deleted).
func watchReleases(ctx context.Context, cfg Config, released chan<- struct{}) (func(), error) {
	factory := informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0,
		informers.WithNamespace(cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", cfg.Name).String()
		}))
	signal := func(obj interface{}, deleted bool) {
		lease, ok := obj.(*coordinationv1.Lease)
		if !ok || lease.Name != cfg.Name {
			return
		}
		if deleted || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			select {
			case released <- struct{}{}:
			default:
			}
		}
	}
	informer := factory.Coordination().V1().Leases().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj interface{}) { signal(obj, false) },
		DeleteFunc: func(obj interface{}) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			signal(obj, true)
		},
	}); err != nil {
		return nil, err
	}
	watchCtx, cancel := context.WithCancel(ctx)
	factory.Start(watchCtx.Done())
	return func() {
		cancel()
		factory.Shutdown()
	}, nil
}
