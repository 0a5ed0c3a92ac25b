package writepacer

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	limitGauge = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "pv_controller",
		Name:           "write_limit",
		Help:           "Writes the binder allows itself in flight now (--pvclaimbinder-adaptive-writes): its maximum while the apiserver answers within tolerance, less when it queues.",
		StabilityLevel: metrics.ALPHA,
	})
	inFlightGauge = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "pv_controller",
		Name:           "writes_in_flight",
		Help:           "The binder's writes sent and not yet answered.",
		StabilityLevel: metrics.ALPHA,
	})
	waitSeconds = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      "pv_controller",
		Name:           "write_wait_seconds",
		Help:           "How long a write of the binder waited for a slot because the limit was reached.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 14), // 1 ms .. 8 s
		StabilityLevel: metrics.ALPHA,
	})
	latencyRatio = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      "pv_controller",
		Name:           "write_latency_over_baseline",
		Help:           "Each answered write's latency divided by the baseline (the least latency of the last --pvclaimbinder-write-baseline-window): how much the apiserver queued it.",
		Buckets:        []float64{1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 32},
		StabilityLevel: metrics.ALPHA,
	})
	registerOnce sync.Once
)

// RegisterMetrics adds the limiter's metrics to the legacy registry (once).
func RegisterMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(limitGauge, inFlightGauge, waitSeconds, latencyRatio)
	})
}

func setLimitMetric(limit float64) { limitGauge.Set(float64(int(limit))) }
func setInFlightMetric(n int)      { inFlightGauge.Set(float64(n)) }
func observeWait(d time.Duration)  { waitSeconds.Observe(d.Seconds()) }
func observeLatency(latency, base time.Duration) {
	latencyRatio.Observe(float64(latency) / float64(base))
}
