// Package election runs a function while this process holds a Lease.
//
// It wraps client-go's leaderelection with three properties that a static-pod binder needs and
// client-go alone does not give:
//   - the Lease is released only after the guarded function has returned, so a successor never
//     overlaps with in-flight writes of the old leader;
//   - a standby watches the Lease and tries to acquire it as soon as it is released, instead of
//     waiting up to RetryPeriod*2.2 for its next poll;
//   - losing the Lease (as opposed to giving it up on shutdown) is reported as ErrLeaseLost so the
//     caller can exit and be restarted.
package election
