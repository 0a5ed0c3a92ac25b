// Package invariants holds the rules every torture checks a binder against, so that a rule added
// here is checked by the model torture (test/torture) and the cluster torture
// (test/torture/cluster) alike, as etcd's tests/robustness/validate serves every traffic source.
//
// A rule is a Rule, its breach a Violation naming it. The rules on the objects themselves are
// functions of them: whether a volume fits a claim for the way the two came to be bound (Fits,
// from a Binding), the one-to-one rules over all Bound objects (TwoClaimsOnePV, OneClaimTwoPVs),
// a Bound claim against its volume (CheckBound), a claim that lost a volume still naming it
// (CheckLost), and the end state once a run has been quiet (Settled). Each harness observes
// differently and calls the functions where it can see what they need: the model sees every
// commit in order, with what the binder's informers had delivered; the cluster torture sees a real
// apiserver through its own informers, confirmed by quorum reads.
//
// Rules only the model can check, and why a real cluster cannot show them:
//   - the choice rules (ChoiceWorse, ChoiceLargerWhileBetterComing): whether the binder chose the best
//     volume it knew of needs what its informers had delivered at each write, which only the
//     model's apiserver records;
//   - HotLoop: one object written again and again against the same version needs every write and
//     the version it was made from; a watch coalesces them;
//   - DeletingClaimBound, DeletingPVBound: judged against what the binder knew when it wrote (a
//     bind from an informer that had not yet delivered the deletion is a race no binder closes);
//   - ReleasedEarly, BoundTakenAway, LostRebound: a change of one object judged against another
//     at that same instant; the cluster's two informers are not one snapshot (the cluster torture
//     checks the states they lead to: CheckLost once it persists, TwoClaimsOnePV at once).
//
// Planted lists one state per rule that can be checked on a snapshot; each harness's unit tests
// run its own checker on them and expect exactly that rule.
package invariants
