package app

import (
	"context"
	"errors"
	"sync/atomic"
)

// binderState is what /readyz reports on.
type binderState struct {
	// leading: this process binds (it holds the Lease, or runs without leader election).
	leading atomic.Bool
	synced  atomic.Bool
	// warm: the binder's informers run before the Lease is held (--leader-elect-warm-standby);
	// warmSynced once they have synced.
	warm       bool
	warmSynced atomic.Bool
}

// runUnelected runs the binder without leader election: this process binds, so /readyz waits for
// its caches as it does for a leader's (before, it reported ready before they had synced).
func (s *binderState) runUnelected(ctx context.Context, run func(context.Context)) {
	s.leading.Store(true)
	defer s.leading.Store(false)
	run(ctx)
}

// cachesSynced is the readiness check "binder-caches": a replica that leads, or stands by warm,
// is ready once the caches it binds from have synced. A standby's listing every volume and claim
// with its own identity is also what deploy/rollout.sh enable waits for before KCM's binder goes.
func (s *binderState) cachesSynced() error {
	if s.leading.Load() {
		if !s.synced.Load() {
			return errors.New("leading, but the binder's informer caches have not synced yet")
		}
		return nil
	}
	if s.warm && !s.warmSynced.Load() {
		return errors.New("standing by warm, but the binder's informer caches have not synced yet")
	}
	return nil
}
