// Package writepacer keeps the binder a fair neighbour on a shared apiserver. The binder runs many
// workers (--pvclaimbinder-concurrent-syncs, 32 claim and 32 volume workers), so under a burst it can
// keep dozens of writes in flight, while kube-controller-manager's other controllers, several of them
// with one worker (pvc-protection: one write at a time, and since v1.37 one more write per newly
// bound claim, its Unused condition), wait behind them: their throughput is one over the apiserver's
// latency. Priority and fairness does not help when the apiserver is short of CPU or etcd time
// rather than of seats, as on a small control plane.
//
// A Limiter bounds the binder's writes in flight by the apiserver's latency, as TCP Vegas and
// Netflix's gradient concurrency limit do: the baseline is the least write latency seen in a recent
// window (the apiserver with no queue), and the limit grows while writes return within
// --pvclaimbinder-write-latency-tolerance times it and shrinks in proportion when they take longer.
// The apiserver stays busy (the limit keeps a few writes queued) but its queue stays short, so a
// neighbour's single write waits for a few of ours, not for dozens. Reads are not limited: the
// binder's caches and conflict re-reads stay current.
package writepacer
