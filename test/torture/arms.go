package torture

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	upstream "k8s.io/kubernetes/pkg/controller/volume/persistentvolume"

	"github.com/fastpv/pv-controller-manager/pkg/compact"
	ours "github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume"
)

// The arms: the same binder code a cluster runs, started as KCM starts it. The upstream arm is
// the unpatched controller of this release, compiled from the k8s.io/kubernetes module (not a
// copy of ours); ours is the generated, patched copy with the binary's defaults.
const (
	armOurs     = "ours"
	armUpstream = "upstream"
)

// syncPeriod is KCM's default --pvclaimbinder-sync-period.
const syncPeriod = 15 * time.Second

// oursFullResyncPeriod and oursWorkers are the binary's defaults (cmd/.../options).
const (
	oursFullResyncPeriod = 5 * time.Minute
	oursWorkers          = 32
	oursGracePeriod      = 5 * time.Second
	oursUnclaimedGrace   = 2 * time.Second
)

type runner interface {
	Run(ctx context.Context)
}

// armInformers returns the arm's informers as its binary makes them: ours' compact volumes and
// claims (pkg/compact), so that their shared parts run under every seed.
func armInformers(arm string, client kubernetes.Interface) informers.SharedInformerFactory {
	if arm == armOurs {
		return informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(compact.New().Transform))
	}
	return informers.NewSharedInformerFactory(client, 0)
}

// startArm builds the arm's controller on client and returns it; the informers are started by
// the caller once every informer the controller asked for is registered.
func startArm(ctx context.Context, arm string, client kubernetes.Interface, factory informers.SharedInformerFactory) (runner, error) {
	switch arm {
	case armOurs:
		return ours.NewController(ctx, ours.ControllerParameters{
			KubeClient:                 client,
			SyncPeriod:                 syncPeriod,
			FullResyncPeriod:           oursFullResyncPeriod,
			ConcurrentSyncs:            oursWorkers,
			ReservedVolumeGracePeriod:  oursGracePeriod,
			UnclaimedVolumeGracePeriod: oursUnclaimedGrace,
			VolumeInformer:             factory.Core().V1().PersistentVolumes(),
			ClaimInformer:              factory.Core().V1().PersistentVolumeClaims(),
			ClassInformer:              factory.Storage().V1().StorageClasses(),
			PodInformer:                factory.Core().V1().Pods(),
			NodeInformer:               factory.Core().V1().Nodes(),
			EnableDynamicProvisioning:  true,
		})
	case armUpstream:
		return upstream.NewController(ctx, upstream.ControllerParameters{
			KubeClient:                client,
			SyncPeriod:                syncPeriod,
			VolumeInformer:            factory.Core().V1().PersistentVolumes(),
			ClaimInformer:             factory.Core().V1().PersistentVolumeClaims(),
			ClassInformer:             factory.Storage().V1().StorageClasses(),
			PodInformer:               factory.Core().V1().Pods(),
			NodeInformer:              factory.Core().V1().Nodes(),
			EnableDynamicProvisioning: true,
		})
	}
	return nil, fmt.Errorf("unknown arm %q (want %s or %s)", arm, armOurs, armUpstream)
}
