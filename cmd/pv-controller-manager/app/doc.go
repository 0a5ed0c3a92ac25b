// Package app is the pv-controller-manager command: flag parsing, secure serving of health and
// metrics, leader election on our own Lease, and the PersistentVolume binder itself.
package app
