package options

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	metricsfeatures "k8s.io/component-base/metrics/features"
)

// applyMetricsFeatureGates does what kube-controller-manager's Config does before it applies the
// metrics options, on this Kubernetes release. Releases where KCM differs replace this file
// (releases/<line>/src/..., docs/maintainers/patches-and-releases.md).
func applyMetricsFeatureGates() {
	metricsfeatures.ApplyFeatureGates(utilfeature.DefaultMutableFeatureGate)
}
