package app

import (
	"context"
	"sync/atomic"

	"k8s.io/client-go/informers"
	"k8s.io/klog/v2"
)

// startWarmStandby starts, before the Lease is held, the informers the binder will use
// (--leader-elect-warm-standby): a replica that takes over then starts binding from synced caches
// instead of listing every volume and claim first. The controller itself, its queues and handlers,
// are made only when the Lease is held; its handlers then receive the caches' objects as the initial
// list, as after a cold start (patch 0020 leaves the settled ones to its paced first pass).
func startWarmStandby(ctx context.Context, factory informers.SharedInformerFactory, synced *atomic.Bool) {
	// The informers runBinder gives the controller; asking for one registers it, so Start starts it.
	p := binderParameters{}.WithInformers(factory)
	p.VolumeInformer.Informer()
	p.ClaimInformer.Informer()
	p.ClassInformer.Informer()
	p.PodInformer.Informer()
	p.NodeInformer.Informer()
	factory.Start(ctx.Done())
	go func() {
		if allTrue(factory.WaitForCacheSync(ctx.Done())) {
			synced.Store(true)
			klog.FromContext(ctx).Info("Warm standby: the binder's caches have synced")
		}
	}()
}
