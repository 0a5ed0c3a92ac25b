// Package result holds what pv-load writes and the benchmark report reads: a run's claim->Bound
// samples and summary, and the apiserver's write ceiling. It imports only the standard library, so
// hack/cmd/benchreport reads the same types without the cluster client behind test/harness/loadgen.
package result
