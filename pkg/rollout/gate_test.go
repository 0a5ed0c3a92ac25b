package rollout

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A pod that answers once and then stops answering has not come up: the wait ends only after the
// check has passed at every poll for the settle window.
func TestWaitForSettles(t *testing.T) {
	cases := []struct {
		name    string
		results []error // by poll; the last repeats
		timeout time.Duration
		wantErr string
	}{
		{name: "passes and stays", results: []error{ErrNotYet, nil}, timeout: 30 * time.Second},
		// Only the timeout ends this wait, so a short one decides nothing.
		{name: "passes once, then not", results: []error{nil, ErrNotYet}, timeout: 200 * time.Millisecond, wantErr: "not up after"},
		{name: "passes, fails once, passes again", results: []error{nil, nil, ErrNotYet, nil}, timeout: 30 * time.Second},
		{name: "passes, then fails for good", results: []error{nil, nil, errors.New("CrashLoopBackOff after 2 restarts")}, timeout: 30 * time.Second, wantErr: "CrashLoopBackOff"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const settle, interval = 50 * time.Millisecond, 5 * time.Millisecond
			// The settle window is measured on a clock that moves one interval per poll, so
			// the polls it takes do not depend on how late each one runs.
			now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			polls := 0
			var passStart time.Time
			check := func(context.Context, Want) error {
				now = now.Add(interval)
				r := tc.results[min(polls, len(tc.results)-1)]
				polls++
				if r == nil && passStart.IsZero() {
					passStart = now
				} else if r != nil {
					passStart = time.Time{}
				}
				return r
			}
			err := waitFor(context.Background(), check, Want{}, tc.timeout, interval, settle, clock)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("waitFor: %v", err)
				}
				if passStart.IsZero() {
					t.Fatalf("returned after %d polls while the check did not pass", polls)
				}
				if d := now.Sub(passStart); d < settle {
					t.Errorf("returned %s after the check started passing, before the settle window of %s", d, settle)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("waitFor: %v, want an error naming %q", err, tc.wantErr)
			}
		})
	}
}

// Once KCM runs without its binder here, Enable waits for a binder to run; when none does, KCM's
// binder goes back on (its original manifest, byte for byte) and the error says why.
func TestEnableSwitchesKCMBackWhenNoBinderTakesOver(t *testing.T) {
	original := readFile(t, "testdata/kubeadm.yaml")
	disabled := readFile(t, "testdata/kubeadm.disabled.golden")
	for _, takesOver := range []bool{true, false} {
		o := newNode(t, original)
		kcmPath := filepath.Join(o.ManifestsDir, KCMManifestName)
		o.WaitTimeout, o.WaitInterval = 100*time.Millisecond, time.Millisecond
		o.Check = func(context.Context, Want) error { return nil }
		var kcmWaited bool
		o.KCMCheck = func(_ context.Context, want Want) error {
			if want.CommandHas != "-persistentvolume-binder-controller" {
				t.Errorf("waiting for KCM with %+v", want)
			}
			if got := readFile(t, kcmPath); !bytes.Equal(got, disabled) {
				t.Errorf("waiting for KCM without its binder before its manifest says so")
			}
			kcmWaited = true
			return nil
		}
		o.BinderCheck = func(context.Context, Want) error {
			if !kcmWaited {
				t.Errorf("looking for a binder before KCM runs the new manifest")
			}
			if takesOver {
				return nil
			}
			return errorsJoinNotYet("no binder runs: nobody holds Lease kube-system/pv-controller-manager")
		}
		err := Enable(o)
		got := readFile(t, kcmPath)
		if takesOver {
			if err != nil || !bytes.Equal(got, disabled) {
				t.Errorf("a binder took over: Enable %v, KCM's binder off %v", err, bytes.Equal(got, disabled))
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "back on") || !strings.Contains(err.Error(), "nobody holds Lease") {
			t.Errorf("no binder took over: Enable %v, want an error saying KCM's binder is back on and why", err)
		}
		if !bytes.Equal(got, original) {
			t.Errorf("no binder took over, but KCM's manifest is not the original")
		}
		if _, err := os.Stat(filepath.Join(o.ManifestsDir, OurManifestName)); err != nil {
			t.Errorf("our manifest removed: %v (it stays, holding its writes while KCM binds)", err)
		}
		// And a later disable still restores the original and removes ours.
		o.KCMCheck = nil
		if err := Disable(o); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, kcmPath); !bytes.Equal(got, original) {
			t.Errorf("disable after a switched-back enable: KCM's manifest is not the original")
		}
	}
}

func errorsJoinNotYet(msg string) error { return errors.Join(ErrNotYet, errors.New(msg)) }
