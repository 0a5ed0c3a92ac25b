// Package cluster is the cluster torture (make torture-cluster, docs/maintainers/torture.md):
// on a real local cluster, a binder under test runs behind a fault-injecting proxy
// (test/harness/faultproxy), as two replicas that are SIGKILLed again and again, while a seeded random
// workload creates and deletes claims and volumes of several shapes. An invariant checker watches
// every claim and volume from its own client, directly against the apiserver, during the run and
// once it has settled. Both arms run the same seed: ours (pv-controller-manager) and upstream's
// binder (kube-controller-manager running only persistentvolume-binder-controller, built from the
// same k8s.io/kubernetes release).
//
// Files: arms.go (the binder processes), workload.go (the operations), consumers.go (the storage
// classes, WaitForFirstConsumer pods, the workload as external provisioner), checker.go (the
// invariants of test/invariants, on what the cluster shows), recovery.go (the time to bind again
// after a kill or an outage), controlplane.go (crashes of the apiserver and etcd; kube-scheduler and KCM started
// again when they exit, as a kubelet would), placement.go (a settled run's WaitForFirstConsumer
// pods placed), run.go (one arm: faults, kills, settling), report.go (both arms side by side).
package cluster
