package loadgen

import v1 "k8s.io/api/core/v1"

// ScenarioClaimRef: each PV reserves its claim by spec.claimRef (namespace and name, as the
// Kubernetes docs teach operators; external-provisioner and kube-scheduler write the same), and
// the claim has no volumeName.
const ScenarioClaimRef = "claimref"

func init() {
	registerPairs(pairs{
		kind:  ScenarioClaimRef,
		help:  "N PV/PVC pairs, each PV reserving its claim by spec.claimRef, claims without volumeName",
		bench: Bench{Counts: "COUNT", Default: true},
		shape: func(c *Config, i int, _ *v1.PersistentVolumeClaim, volume *v1.PersistentVolume) {
			volume.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace, Name: c.name(i)}
		},
	})
}
