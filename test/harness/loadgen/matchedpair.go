package loadgen

import v1 "k8s.io/api/core/v1"

// ScenarioMatchedPair: N pairs of a PV and a claim of the same size that name neither each other
// (no claimRef, no volumeName), created pair by pair in an order, so the binder matches claims
// while volumes keep arriving: what a user who creates volumes and claims together sees (writes
// per bind). Unlike matched, no volume is Available before the clock starts.
const ScenarioMatchedPair = "matched-pair"

func init() {
	registerPairs(pairs{
		kind:      ScenarioMatchedPair,
		help:      "N PV/PVC pairs of one size that name neither each other; the binder matches them",
		bench:     Bench{Counts: "COUNT"},
		shape:     func(*Config, int, *v1.PersistentVolumeClaim, *v1.PersistentVolume) {},
		anyVolume: true,
	})
}
