// Package e2e is the ginkgo suite for pv-controller-manager. It runs against any cluster whose
// PersistentVolume binder is pv-controller-manager (KUBECONFIG), and `make e2e` runs it on the local
// kwokctl cluster. Specs that need more than a kubeconfig read it from the environment and skip
// without it:
//
//	E2E_METRICS_URL      https URL of our /metrics (spec: metrics), e.g. https://127.0.0.1:10267/metrics
//	E2E_PV_LOAD          path to bin/pv-load (slow spec: 1000 pairs)
//	E2E_LONG_SYNC_PERIOD set when the binder runs with a sync period of minutes, so a fast bind
//	                     after a late PV proves the fast path (spec: PV after PVC)
package e2e
