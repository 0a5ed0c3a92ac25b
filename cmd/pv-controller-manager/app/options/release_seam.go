// Release seam: the code of this package that differs between release lines. A line where it
// differs carries its own copy of this file at
// releases/<line>/src/cmd/pv-controller-manager/app/options/ (v1.35); nothing else in the
// package differs (hack/verify/verify-release-seams.sh).

package options

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	metricsfeatures "k8s.io/component-base/metrics/features"
)

// applyMetricsFeatureGates does what kube-controller-manager's Config does before it applies the
// metrics options, on this Kubernetes release. v1.35: nothing (component-base v0.35 has no
// metrics feature gates to apply).
func applyMetricsFeatureGates() {
	metricsfeatures.ApplyFeatureGates(utilfeature.DefaultMutableFeatureGate)
}
