package app

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	pvmetrics "github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume/metrics"
)

// initBinderSeries creates every series of the binder's counters and bind-latency histogram at 0:
// rate() and the alerts of deploy/monitoring then see a series from the first scrape instead of
// "no data" until the first conflict or error. The controller registers them in Run once its caches
// have synced; before that a series created here would be dropped, so it waits for that first.
func initBinderSeries(ctx context.Context) {
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return pvmetrics.SyncConflictsTotal.IsCreated(), nil
	}); err != nil {
		return
	}
	for _, queue := range []string{pvmetrics.ClaimQueue, pvmetrics.VolumeQueue} {
		pvmetrics.SyncConflictsTotal.WithLabelValues(queue)
		for _, reason := range []string{pvmetrics.RequeueError, pvmetrics.RequeueAPIServerError, pvmetrics.RequeueResync, pvmetrics.RequeueFullResync} {
			pvmetrics.RequeuesTotal.WithLabelValues(queue, reason)
		}
	}
	// Only claims are queued because of a volume.
	pvmetrics.RequeuesTotal.WithLabelValues(pvmetrics.ClaimQueue, pvmetrics.RequeueVolumeChanged)
	pvmetrics.RequeuesTotal.WithLabelValues(pvmetrics.ClaimQueue, pvmetrics.RequeueVolumeAvailable)
	for _, path := range []string{pvmetrics.BindPathPrebound, pvmetrics.BindPathMatched} {
		pvmetrics.ClaimBindDuration.WithLabelValues(path)
	}
}
