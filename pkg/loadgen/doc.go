// Package loadgen creates static PersistentVolume/PersistentVolumeClaim workloads against a real
// cluster and measures, by watch, how long each claim takes to become Bound. It is shared by
// `make demo`, the benchmark and the e2e suite's slow specs.
//
// Scenarios:
//   - prebound: N PV/PVC pairs, each claim naming its volume in spec.volumeName (the seed load),
//     created concurrently; latency is from the claim's create call to Bound.
//   - pvc-first: N pre-bound claims first, their volumes after a delay; latency is from the
//     volume's create call to Bound.
//   - matched: N volumes first, then N claims without spec.volumeName; latency from the claim's
//     create call to Bound.
//   - claimref: N volumes reserving their claims by spec.claimRef (namespace and name), and the
//     claims, without spec.volumeName; latency from the claim's create call to Bound.
//   - provisioning: N claims of a StorageClass with an external provisioner; the load generator
//     creates each claim's PV once the binder hands the claim over, as external-provisioner does;
//     latency from the claim's create call to Bound.
//   - wffc: N local PVs with node affinity spread over the schedulable nodes, then N claims of a
//     WaitForFirstConsumer class and a pod per claim; kube-scheduler picks the node and writes the
//     PV's claimRef; latency from the pod's create call to Bound, and to the pod scheduled.
//
// After binding, Verify checks that every volume is bound to exactly its own claim.
package loadgen
