// Package pvcwhy explains why a PersistentVolumeClaim is not Bound (or not resized), for the
// kubectl plugin kubectl-pvc_why. It works on a Snapshot of the objects involved, read from a
// cluster or from a `kubectl get -o yaml` dump, and asks the vendored controller's own matching
// code (persistentvolume.VolumeIndex, CheckVolumeSatisfyClaim) whether a volume would be bound, so
// its verdict is the binder's decision. Every lookup goes through an index built once per
// snapshot, so a whole cluster is explained in one pass.
package pvcwhy
