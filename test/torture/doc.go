// Package torture runs the binder, ours and upstream's of the same release, against random
// workloads and injected API faults on a model of the apiserver, in virtual time (testing/synctest),
// and checks safety invariants at every committed write and liveness once the run is quiet
// (docs/maintainers/torture.md).
package torture
