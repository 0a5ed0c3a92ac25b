// Package shadow runs the binder beside kube-controller-manager's without changing anything
// (--shadow): every write of the binder's client goes to the apiserver as a dry run
// (dryRun=All: validated and admitted, never stored), and a Tracker compares, per claim, what
// ours decided (the volume its first dry-run claimRef write named, or the provisioner it handed
// the claim to) and when, with what KCM's binder actually did and when, seen by the informers.
//
// The controller's cache and a dry-run answer: the controller stores the object a write returns
// (storeObjectUpdate). A dry-run answer carries the content ours would have written at the
// resourceVersion the object already had, and storeObjectUpdate accepts an equal version, so ours
// goes on from the state it would have made (a volume it "bound" looks bound to it). The next
// informer event for that object replaces it: a real write (KCM's) has a higher resourceVersion,
// and the informer's periodic resync re-delivers the stored object at the same one. Ours'
// imagined state therefore lasts at most until the object changes or the next resync, and its
// decisions afterwards start again from what is stored.
package shadow
