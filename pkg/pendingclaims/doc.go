// Package pendingclaims reports the claims an operator should be told about: Pending for longer
// than a minute although the binder could bind them now, because a volume is pre-bound to them
// (spec.volumeName names a volume free for them, or a volume's claimRef names them) or because an
// unbound volume fits them. Neither is a claim waiting for its provisioner or its first consumer:
// those are normal. A claim counts exactly when `kubectl pvc-why` would say BindPending: the
// collector runs the explanation logic it shares with kubectl pvc-why (pkg/explain), which asks the binder's own volume index. The alerts of deploy/monitoring read the two gauges it exports; the binder
// registers it once it leads (standbys have no caches), and it reports nothing until the caches
// have synced.
//
// A scrape examines at most the 200 oldest Pending claims against the informers' caches, claims of
// one shape share one search of the volume index, and a result is reused for 10 s (two Prometheus
// replicas cost one evaluation): nothing to do when no claim is older than a minute, 0.8 s when
// 1000 claims that fit no volume wait among 100 000 volumes (BenchmarkEvaluate100k, 2 cores, the
// machine loaded by a cluster torture). The gauges then count among those 200, which is enough to
// say that something is stuck and since when.
package pendingclaims
