package shadow

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	decisionsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: "pv_controller",
		Name:      "shadow_decisions_total",
		Help: "Claims compared in shadow mode (--shadow) by outcome: agree (ours would have chosen what kube-controller-manager's binder did), " +
			"disagree (another volume, and not a legitimate tie), disagree-legitimate (another volume of the same class and capacity that fits as well), " +
			"only-ours (ours would have bound, KCM did not within --shadow-window), only-kcm (KCM bound before ours decided).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"outcome"})
	leadSeconds = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem: "pv_controller",
		Name:      "shadow_lead_seconds",
		Help: "In shadow mode, for claims where both binders agreed: how much sooner ours had decided than kube-controller-manager's " +
			"binder was seen to bind (0 when KCM was first).",
		Buckets:        metrics.ExponentialBuckets(0.01, 2, 16), // 10 ms .. 5.5 min
		StabilityLevel: metrics.ALPHA,
	})
	registerOnce sync.Once

	dryRunWritesTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: "pv_controller",
		Name:      "shadow_dry_run_writes_total",
		Help: "In shadow mode, the binder's writes of volumes and claims (resource, subresource) by result: sent (to the apiserver, as a dry run), " +
			"repeat (the same content the apiserver already accepted for that object: answered without sending it again).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"resource", "subresource", "result"})
	registerTransportOnce sync.Once
)

// Results of a dry-run write (dryRunWritesTotal).
const (
	resultSent   = "sent"
	resultRepeat = "repeat"
)

func registerTransportMetrics() {
	registerTransportOnce.Do(func() { legacyregistry.MustRegister(dryRunWritesTotal) })
}

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(decisionsTotal, leadSeconds)
		for _, o := range Outcomes {
			decisionsTotal.WithLabelValues(string(o)) // every outcome present from the start, at 0
		}
	})
}
