package result

import (
	"fmt"
	"time"
)

// Sample is one claim's measurement.
type Sample struct {
	Claim   string        `json:"claim"`
	Latency time.Duration `json:"latencyNs"`
}

// Result is what a scenario's run measured.
type Result struct {
	Scenario string `json:"scenario"`
	// Order is the order prebound and claimref pairs were created in (pv-first, claim-first, together).
	Order string `json:"order,omitempty"`
	Count int    `json:"count"`
	// Samples, sorted by latency, for the claims that became Bound.
	Samples []Sample `json:"samples"`
	// TimeToAllBound is from the start of the clock to the last claim Bound.
	TimeToAllBound time.Duration `json:"timeToAllBoundNs"`
	// Unbound counts the claims not Bound when the timeout expired.
	Unbound int `json:"unbound"`
	// WritesAfterStart is what must pass the apiserver between the start of the clock and the last
	// bind, at the minimum of 4 writes per bind: the creates in that span plus 4 per claim. The
	// report divides it by the write ceiling to get the floor. Results written before it existed
	// have 0; the report then derives it from the scenario's name.
	WritesAfterStart int `json:"writesAfterStart,omitempty"`
	// PodScheduled (wffc): pod create call to spec.nodeName set, sorted, for the scheduled pods.
	PodScheduled []Sample `json:"podScheduled,omitempty"`
	// VolumeReserved (wffc): pod create call to the scheduler's write of the PV's claimRef.
	VolumeReserved []Sample `json:"volumeReserved,omitempty"`
	// ClaimDeleteToGone (churn): an old claim's delete call to its DELETED event (KCM's
	// pvc-protection controller removed its finalizer), sorted.
	ClaimDeleteToGone []Sample `json:"claimDeleteToGone,omitempty"`
	// VolumeDeleteToGone (churn): an old, Released volume's delete call to its DELETED event
	// (KCM's pv-protection controller removed its finalizer), sorted.
	VolumeDeleteToGone []Sample `json:"volumeDeleteToGone,omitempty"`
	// ChurnLoop (churn): from the start of the clock to the last claim created again.
	ChurnLoop time.Duration `json:"churnLoopNs,omitempty"`
}

// Percentile returns the p-th percentile (0 < p <= 100) of the bound claims' latencies.
func (r *Result) Percentile(p float64) time.Duration {
	return Percentile(r.Samples, p)
}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted samples' latencies.
func Percentile(samples []Sample, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	i := int(float64(len(samples))*p/100+0.5) - 1
	i = max(0, min(i, len(samples)-1))
	return samples[i].Latency
}

// Summary is one line with p50/p90/p99/max and time to all bound (and, for wffc, a second line:
// pod create to scheduled).
func (r *Result) Summary() string {
	if len(r.PodScheduled) > 0 {
		p := r.PodScheduled
		return r.bindSummary() + fmt.Sprintf("\n%s: %d/%d pods scheduled; pod->scheduled p50 %s p90 %s p99 %s max %s",
			r.Scenario, len(p), r.Count, Percentile(p, 50).Round(time.Millisecond), Percentile(p, 90).Round(time.Millisecond),
			Percentile(p, 99).Round(time.Millisecond), Percentile(p, 100).Round(time.Millisecond))
	}
	if len(r.ClaimDeleteToGone) > 0 {
		c, v := r.ClaimDeleteToGone, r.VolumeDeleteToGone
		return r.bindSummary() + fmt.Sprintf("\n%s: delete-and-recreate loop %s; claim delete->gone p50 %s max %s (%d); volume delete->gone p50 %s max %s (%d)",
			r.Scenario, r.ChurnLoop.Round(time.Millisecond),
			Percentile(c, 50).Round(time.Millisecond), Percentile(c, 100).Round(time.Millisecond), len(c),
			Percentile(v, 50).Round(time.Millisecond), Percentile(v, 100).Round(time.Millisecond), len(v))
	}
	return r.bindSummary()
}

func (r *Result) bindSummary() string {
	return fmt.Sprintf("%s: %d/%d bound; claim->Bound p50 %s p90 %s p99 %s max %s; all bound after %s",
		r.Scenario, len(r.Samples), r.Count,
		r.Percentile(50).Round(time.Millisecond), r.Percentile(90).Round(time.Millisecond),
		r.Percentile(99).Round(time.Millisecond), r.Percentile(100).Round(time.Millisecond),
		r.TimeToAllBound.Round(time.Millisecond))
}

// Ceiling is the apiserver's write throughput for the writes a bind needs (pv-load --scenario
// write-ceiling, run with no binder).
type Ceiling struct {
	Pairs       int `json:"pairs"`
	Concurrency int `json:"concurrency"`
	// Creates: Pairs PVs and Pairs PVCs, as the seed load creates them.
	Creates        int           `json:"creates"`
	CreateDuration time.Duration `json:"createDurationNs"`
	// BindWrites: per pair the four writes of a bind (PV update, PV status, PVC update, PVC status),
	// issued by Concurrency clients, pair after pair like a binder's workers.
	BindWrites        int           `json:"bindWrites"`
	BindWriteDuration time.Duration `json:"bindWriteDurationNs"`
	// WritesPerSecond over creates and bind writes together.
	WritesPerSecond float64 `json:"writesPerSecond"`
	// BindWritesPerSecond over the bind writes alone.
	BindWritesPerSecond float64 `json:"bindWritesPerSecond"`
}

// Summary is one line for humans.
func (r *Ceiling) Summary() string {
	return fmt.Sprintf("write ceiling: %d creates in %s, %d bind writes in %s (%.0f/s); %.0f writes/s overall, %d clients",
		r.Creates, r.CreateDuration.Round(time.Millisecond), r.BindWrites, r.BindWriteDuration.Round(time.Millisecond),
		r.BindWritesPerSecond, r.WritesPerSecond, r.Concurrency)
}
