// Package e2e is the ginkgo suite for pv-controller-manager. It runs against any cluster whose
// PersistentVolume binder is pv-controller-manager (KUBECONFIG), and `make e2e` runs it on the local
// kwokctl cluster. Specs that need more than a kubeconfig read it from the environment and skip
// without it:
//
//	E2E_METRICS_URL      https URL of our /metrics (spec: metrics), e.g. https://127.0.0.1:10267/metrics
//	E2E_PV_LOAD          path to bin/pv-load (slow spec: 1000 pairs)
//	E2E_PVC_WHY          path to bin/kubectl-pvc_why (specs labelled pvc-why: each verdict created for real)
//	E2E_LONG_SYNC_PERIOD set when the binder runs with a sync period of minutes, so a fast bind
//	                     after a late PV proves the fast path (spec: PV after PVC)
//	E2E_PVCM_BINARY, E2E_PVCM_PIDFILE, E2E_PVCM_KUBECONFIG
//	                     our binary, the pid file of the running leader and its kubeconfig (Serial
//	                     spec: failover to a standby; the standby stays as the binder and its pid is
//	                     written to the pid file)
package e2e
