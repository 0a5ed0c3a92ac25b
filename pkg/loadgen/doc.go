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
//
// After binding, Verify checks that every volume is bound to exactly its own claim.
package loadgen
