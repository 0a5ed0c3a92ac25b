package app

import (
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app/config"
	"github.com/fastpv/pv-controller-manager/pkg/shadow"
)

// newShadowTracker compares ours' dry-run decisions with KCM's binder (--shadow). Its events are
// written for real, by the manager's own recorder, not through the binder's dry-run client.
func newShadowTracker(logger klog.Logger, c *config.Config, factory informers.SharedInformerFactory) *shadow.Tracker {
	volumes := factory.Core().V1().PersistentVolumes().Lister()
	return shadow.NewTracker(logger, shadow.Config{
		Window:   c.Shadow.Window,
		Recorder: c.EventRecorder,
		Volume: func(name string) (*v1.PersistentVolume, error) {
			pv, err := volumes.Get(name)
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return pv, err
		},
	})
}

// watchClaimsForShadow feeds the tracker what KCM's binder does to claims.
func watchClaimsForShadow(factory informers.SharedInformerFactory, tracker *shadow.Tracker) error {
	_, err := factory.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { tracker.OnClaim(obj.(*v1.PersistentVolumeClaim)) },
		UpdateFunc: func(_, obj any) { tracker.OnClaim(obj.(*v1.PersistentVolumeClaim)) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if claim, ok := obj.(*v1.PersistentVolumeClaim); ok {
				tracker.OnClaimDeleted(claim.UID)
			}
		},
	})
	return err
}

// forgetDeletedForShadow drops, for each deleted volume and claim, what the dry-run transport
// remembers of the writes the apiserver accepted (shadow.DryRunWrites.Forget).
func forgetDeletedForShadow(factory informers.SharedInformerFactory, dryRun *shadow.DryRunWrites) error {
	forget := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		switch o := obj.(type) {
		case *v1.PersistentVolume:
			dryRun.Forget("persistentvolumes", "", o.Name)
		case *v1.PersistentVolumeClaim:
			dryRun.Forget("persistentvolumeclaims", o.Namespace, o.Name)
		}
	}
	if _, err := factory.Core().V1().PersistentVolumes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: forget}); err != nil {
		return err
	}
	_, err := factory.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: forget})
	return err
}
