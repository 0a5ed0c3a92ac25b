package loadgen

import v1 "k8s.io/api/core/v1"

// ScenarioPrebound: N PV/PVC pairs, each claim naming its volume in spec.volumeName (the seed
// load); latency from the claim's create call (pv-first) to Bound.
const ScenarioPrebound = "prebound"

func init() {
	registerPairs(pairs{
		kind:  ScenarioPrebound,
		help:  "N PV/PVC pairs, each claim naming its PV in spec.volumeName",
		bench: Bench{Counts: "PREBOUND_COUNTS", Default: true},
		shape: func(c *Config, i int, claim *v1.PersistentVolumeClaim, _ *v1.PersistentVolume) {
			claim.Spec.VolumeName = c.name(i)
		},
	})
}
