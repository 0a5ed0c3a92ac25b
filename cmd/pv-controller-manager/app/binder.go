package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/client-go/informers"
	restclient "k8s.io/client-go/rest"
	"k8s.io/component-base/metrics/legacyregistry"
	genericcontrollermanager "k8s.io/controller-manager/app"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2"

	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app/config"
	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app/options"
	"github.com/fastpv/pv-controller-manager/pkg/compact"
	persistentvolumecontroller "github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume"
	"github.com/fastpv/pv-controller-manager/pkg/pendingclaims"
	"github.com/fastpv/pv-controller-manager/pkg/shadow"
	"github.com/fastpv/pv-controller-manager/pkg/upstreamguard"
	"github.com/fastpv/pv-controller-manager/pkg/volumeplugins"
)

// newBinderInformers returns the factory of the binder's informers, as KCM's shared informers
// (managedFields trimmed, as KCM does; volumes and claims compacted: pkg/compact), once the
// apiserver answers.
func newBinderInformers(c *config.Config) (informers.SharedInformerFactory, error) {
	informerClient, err := clientbuilder.SimpleControllerClientBuilder{ClientConfig: c.Kubeconfig}.Client("shared-informers")
	if err != nil {
		return nil, err
	}
	// Like KCM: wait for a starting apiserver before failing.
	if err := genericcontrollermanager.WaitForAPIServer(informerClient, 10*time.Second); err != nil {
		return nil, fmt.Errorf("failed to wait for apiserver being healthy: %w", err)
	}
	return informers.NewSharedInformerFactoryWithOptions(informerClient, resyncPeriod(c), informers.WithTransform(compact.New().Transform)), nil
}

// runBinder builds the controller as KCM's newPersistentVolumeBinderController does, on the given
// informers (a warm standby's, already started) or on its own, and runs it until ctx is done.
func runBinder(ctx context.Context, c *config.Config, state *binderState, guard *upstreamguard.Guard, warm informers.SharedInformerFactory) error {
	logger := klog.FromContext(ctx)
	informerFactory := warm
	if informerFactory == nil {
		var err error
		if informerFactory, err = newBinderInformers(c); err != nil {
			return err
		}
		// A warm standby's informers run until the process ends; these end with the leadership.
		defer informerFactory.Shutdown()
	}

	plugins, err := volumeplugins.ProbeProvisionableRecyclableVolumePlugins(logger, c.PersistentVolumeBinderController.VolumeConfiguration)
	if err != nil {
		return fmt.Errorf("failed to probe volume plugins when starting persistentvolume controller: %w", err)
	}
	// The binder's writes are held while KCM runs its own binder; its reads (informers) are not.
	// In shadow mode they are dry runs instead, observed by the tracker (JSON, so it can read them).
	binderConfig := restclient.CopyConfig(c.Kubeconfig)
	var tracker *shadow.Tracker
	var dryRun *shadow.DryRunWrites
	if c.Shadow.Enabled {
		tracker = newShadowTracker(logger, c, informerFactory)
		dryRun = shadow.NewDryRunWrites(tracker.Observe)
		binderConfig.ContentType, binderConfig.AcceptContentTypes = "application/json", "application/json"
		binderConfig.Wrap(dryRun.Wrap)
		logger.Info("Shadow mode: every write is a dry run; decisions are compared with kube-controller-manager's binder", "window", c.Shadow.Window)
	} else {
		binderConfig.Wrap(guard.WrapTransport)
	}
	binderClient, err := clientbuilder.SimpleControllerClientBuilder{ClientConfig: binderConfig}.Client(options.BinderUserAgent)
	if err != nil {
		return err
	}
	params := binderParameters{
		KubeClient:                 binderClient,
		SyncPeriod:                 c.PersistentVolumeBinderController.PVClaimBinderSyncPeriod.Duration,
		FullResyncPeriod:           c.Binder.FullResyncPeriod,
		ConcurrentSyncs:            c.Binder.ConcurrentSyncs,
		ReservedVolumeGracePeriod:  c.Binder.ReservedVolumeGracePeriod,
		UnclaimedVolumeGracePeriod: c.Binder.UnclaimedVolumeGracePeriod,
		VolumePlugins:              plugins,
		EnableDynamicProvisioning:  c.PersistentVolumeBinderController.VolumeConfiguration.EnableDynamicProvisioning,
	}
	if err := params.setMetricsVolumePlugins(logger, c.PersistentVolumeBinderController.VolumeConfiguration); err != nil {
		return err
	}
	ctrl, err := persistentvolumecontroller.NewController(ctx, params.WithInformers(informerFactory))
	if err != nil {
		return fmt.Errorf("failed to construct persistentvolume controller: %w", err)
	}

	if tracker != nil {
		if err := watchClaimsForShadow(informerFactory, tracker); err != nil {
			return err
		}
		if err := forgetDeletedForShadow(informerFactory, dryRun); err != nil {
			return err
		}
		go tracker.Run(ctx)
	}
	registerPendingClaims(informerFactory, state)
	informerFactory.Start(ctx.Done()) // those not started yet
	go func() {
		if synced := informerFactory.WaitForCacheSync(ctx.Done()); allTrue(synced) {
			state.synced.Store(true)
			initBinderSeries(ctx)
		}
	}()
	defer state.synced.Store(false)

	logger.Info("Starting controller", "controller", options.BinderControllerName)
	ctrl.Run(ctx)
	return nil
}

var registerPendingClaimsOnce sync.Once

// registerPendingClaims exports the bindable Pending claims (deploy/monitoring's alerts read them)
// from this leader's caches; a process binds under at most one leadership, so once is enough.
func registerPendingClaims(informerFactory informers.SharedInformerFactory, state *binderState) {
	registerPendingClaimsOnce.Do(func() {
		legacyregistry.CustomMustRegister(&pendingclaims.Collector{
			Claims:  informerFactory.Core().V1().PersistentVolumeClaims().Lister(),
			Volumes: informerFactory.Core().V1().PersistentVolumes().Lister(),
			Classes: informerFactory.Storage().V1().StorageClasses().Lister(),
			Synced:  state.synced.Load,
		})
	})
}

// resyncPeriod is KCM's informer resync: random in [MinResyncPeriod, 2*MinResyncPeriod).
func resyncPeriod(c *config.Config) time.Duration {
	return time.Duration(float64(c.Generic.MinResyncPeriod.Nanoseconds()) * (rand.Float64() + 1))
}

func allTrue[K comparable](m map[K]bool) bool {
	for _, v := range m {
		if !v {
			return false
		}
	}
	return true
}

// binderParameters are the controller's parameters; WithInformers fills in its informers, the one
// list of them (a warm standby starts the same ones).
type binderParameters persistentvolumecontroller.ControllerParameters

func (p binderParameters) WithInformers(f informers.SharedInformerFactory) persistentvolumecontroller.ControllerParameters {
	p.VolumeInformer = f.Core().V1().PersistentVolumes()
	p.ClaimInformer = f.Core().V1().PersistentVolumeClaims()
	p.ClassInformer = f.Storage().V1().StorageClasses()
	p.PodInformer = f.Core().V1().Pods()
	p.NodeInformer = f.Core().V1().Nodes()
	return persistentvolumecontroller.ControllerParameters(p)
}
