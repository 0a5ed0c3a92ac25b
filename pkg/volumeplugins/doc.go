// Package volumeplugins probes the volume plugins the PersistentVolume binder needs (those that can
// provision, delete or recycle), configured from KCM's volume flags exactly as
// kube-controller-manager's cmd/kube-controller-manager/app/plugins.go does. It is a copy of that
// command-level code, not of the controller, so that we do not link all of KCM.
package volumeplugins
