// Package shadow runs the binder beside kube-controller-manager's without changing anything
// (--shadow): every write of the binder's client goes to the apiserver as a dry run
// (dryRun=All: validated and admitted, never stored), and a Tracker compares, per claim, what
// ours decided (the volume its first dry-run claimRef write named, or the provisioner it handed
// the claim to) and when, with what KCM's binder actually did and when, seen by the informers.
//
// The controller's cache and a dry-run answer: the controller stores the object a write returns
// (storeObjectUpdate). A dry-run answer carries the content ours would have written at the
// resourceVersion the object already had, and storeObjectUpdate accepts an equal version, so ours
// goes on from the state it would have made (a volume it "bound" looks bound to it). But nothing
// is stored, so every sync from the informer's copy replaces that state: an event on the object
// (KCM's real writes), the binder's periodic resync of objects that are not Bound yet, the
// informer's resync. Each one makes ours decide the same bind again. The dry-run transport
// therefore remembers, per object, the content of each write the apiserver accepted, and answers
// a repeat of it itself, as the apiserver did (repeats.go): the apiserver sees each decision once
// per change of the objects it depends on, not once per sync.
package shadow
