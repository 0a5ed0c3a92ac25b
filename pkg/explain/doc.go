// Package explain explains why a PersistentVolumeClaim is not Bound (or not resized): the logic
// the binder (pkg/pendingclaims: its Pending-claim gauges) and the kubectl plugin kubectl-pvc_why
// (its command line: cmd/kubectl-pvc_why/app) share. It works on a Snapshot of the
// objects involved (snapshot.go), read from a cluster or from a `kubectl get -o yaml` dump, and
// asks the vendored controller's own matching code (persistentvolume.VolumeIndex,
// CheckVolumeSatisfyClaim) whether a volume would be bound, so its verdict is the binder's
// decision. Every lookup goes through an index built once per snapshot (analyzer.go), so a whole
// cluster is explained in one pass.
//
// The verdicts, by family: binding.go (Lost, Bound, and which path a Pending claim is on),
// prebound.go (a claim naming its volume), matching.go (the best volume and why the others are
// rejected), waitforconsumer.go, provisioning.go, resize.go; the words in describe.go, the
// output in render.go, the report's fields in report.go.
package explain
