// Package rollout switches a control-plane node between KCM's PersistentVolume binder and
// pv-controller-manager by editing static pod manifests: it adds -persistentvolume-binder-controller
// to KCM's --controllers (as a text edit, so the rest of the file stays byte for byte), keeps a
// backup of the original outside the kubelet's manifest directory, and installs or removes our own
// static pod manifest. Disable restores the original exactly.
package rollout
