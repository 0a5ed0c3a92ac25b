// Release seam of v1.35: this line's copy of cmd/pv-controller-manager/app/options/release_seam.go.

package options

// applyMetricsFeatureGates does what kube-controller-manager's Config does before it applies the
// metrics options, on this Kubernetes release: nothing on v1.35 (component-base v0.35 has no
// metrics feature gates to apply; KCM v1.35.4 calls only s.Metrics.Apply()).
func applyMetricsFeatureGates() {}
