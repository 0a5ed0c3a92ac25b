// Package upstreamguard keeps pv-controller-manager from binding while kube-controller-manager
// still runs its own PersistentVolume binder: two binders double the writes and fight over the
// same objects with 409 conflicts. It watches KCM's (mirror) pods, reads their --controllers with
// KCM's own rule, reports pv_controller_upstream_binder_active, warns with an event on the KCM pod,
// and holds the binder's API writes until KCM runs without its binder.
package upstreamguard
