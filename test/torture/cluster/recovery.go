package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clientset "k8s.io/client-go/kubernetes"

	"github.com/fastpv/pv-controller-manager/test/harness/faultproxy"
	"github.com/fastpv/pv-controller-manager/test/harness/loadgen"
)

// Recovery runs of one arm: the same pre-bound pairs, one binder behind the
// proxy, (a) without faults, (b) with every write refused for Outage from OutageAt after the
// first create, (c) with the random faults of RecoveryRates. The goals: (b) within the fault-free
// time + Outage + 20%, (c) within 1.5x the fault-free time.
type RecoveryConfig struct {
	Config
	Pairs    int
	OutageAt time.Duration
	Outage   time.Duration
}

// RecoveryRates: 10% of writes refused (5% 500, 5% 503), 5% applied with the answer lost, 20% of
// watches answered 410 Gone.
var RecoveryRates = faultproxy.Rates{Refused500: 0.05, Refused503: 0.05, LostAnswer: 0.05, WatchGone: 0.2}

// RecoveryResult is one arm's three times to all bound.
type RecoveryResult struct {
	Arm                               string
	FaultFree, WithOutage, WithFaults time.Duration
	Unbound                           int
	Faults                            map[string]int64
}

// RunRecovery measures one arm.
func RunRecovery(ctx context.Context, cfg RecoveryConfig) (*RecoveryResult, error) {
	restConfig, client, err := adminClient(cfg.Config)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return nil, err
	}
	if err := ensureNamespace(ctx, client, cfg.Namespace); err != nil {
		return nil, err
	}
	res := &RecoveryResult{Arm: cfg.Arm, Faults: map[string]int64{}}
	for _, run := range []struct {
		name   string
		rates  faultproxy.Rates
		outage bool
		out    *time.Duration
	}{
		{"fault-free", faultproxy.Rates{}, false, &res.FaultFree},
		{"outage", faultproxy.Rates{}, true, &res.WithOutage},
		{"faults", RecoveryRates, false, &res.WithFaults},
	} {
		c := cfg.Config
		c.Rates = run.rates
		before := leaseHolder(ctx, client, cfg.Arm)
		env, err := startProxy(c, restConfig)
		if err != nil {
			return nil, err
		}
		binders, err := env.startBinders(c, 1, false)
		if err != nil {
			env.close()
			return nil, err
		}
		// The clock starts once the new binder leads: a predecessor that did not release its Lease
		// (KCM does not) must not cost this run its lease duration.
		if err := waitNewLeader(ctx, client, cfg.Arm, before); err != nil {
			binders.stopAll()
			env.close()
			return nil, err
		}
		load := loadgen.Config{Scenario: loadgen.ScenarioPrebound, Namespace: cfg.Namespace, Prefix: fmt.Sprintf("rec-%s-%s", cfg.Arm[:2], run.name),
			Count: cfg.Pairs, Concurrency: 50, Timeout: 10 * time.Minute}
		stopOutage := make(chan struct{})
		if run.outage {
			go func() {
				select {
				case <-stopOutage:
					return
				case <-time.After(cfg.OutageAt):
				}
				env.proxy.SetOutage(true)
				select {
				case <-stopOutage:
				case <-time.After(cfg.Outage):
				}
				env.proxy.SetOutage(false)
			}()
		}
		r, err := loadgen.Run(ctx, client, load)
		close(stopOutage)
		if err == nil {
			err = loadgen.Verify(ctx, client, load)
		}
		for k, v := range env.proxy.Counts() {
			res.Faults[run.name+"/"+k] = v
		}
		// The binder releases the volumes of the deleted claims; only then does PV protection let
		// the volumes go. So it runs, faults off, until the cleanup is done.
		env.proxy.SetFaults(false)
		if cleanupErr := loadgen.Cleanup(context.WithoutCancel(ctx), client, load); err == nil {
			err = cleanupErr
		}
		binders.stopAll()
		env.close()
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", cfg.Arm, run.name, err)
		}
		*run.out = r.TimeToAllBound
		res.Unbound += r.Unbound
	}
	return res, nil
}

// WriteRecoveryReport writes the arms' recovery times against the goals.
func WriteRecoveryReport(w io.Writer, cfg RecoveryConfig, arms []*RecoveryResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## Recovery: %d pre-bound pairs, one binder behind the proxy\n\n", cfg.Pairs)
	fmt.Fprintf(&b, "Outage: every write refused (503) for %s from %s after the first create. Faults: 10%% of requests refused "+
		"(500/503), 5%% of writes applied with the answer lost, 20%% of watches answered 410. Goals: outage within fault-free + %s + 20%%; faults within 1.5x fault-free.\n\n",
		cfg.Outage, cfg.OutageAt, cfg.Outage)
	b.WriteString("| arm | fault-free | outage (goal) | faults (goal) | claims left unbound |\n|---|---|---|---|---|\n")
	for _, a := range arms {
		outageGoal := time.Duration(float64(a.FaultFree+cfg.Outage) * 1.2)
		faultsGoal := time.Duration(float64(a.FaultFree) * 1.5)
		mark := func(got, goal time.Duration) string {
			verdict := "met"
			if got > goal {
				verdict = "missed"
			}
			return fmt.Sprintf("%s (%s, %s)", got.Round(100*time.Millisecond), goal.Round(100*time.Millisecond), verdict)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d |\n", a.Arm, a.FaultFree.Round(100*time.Millisecond), mark(a.WithOutage, outageGoal), mark(a.WithFaults, faultsGoal), a.Unbound)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// leaseName is the Lease the arm's binder leads with, in kube-system.
func leaseName(arm string) string {
	if arm == ArmUpstream {
		return "torture-upstream-binder"
	}
	return "pv-controller-manager"
}

func leaseHolder(ctx context.Context, client clientset.Interface, arm string) string {
	lease, err := client.CoordinationV1().Leases("kube-system").Get(ctx, leaseName(arm), metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// waitNewLeader polls until a holder other than before holds the arm's Lease.
func waitNewLeader(ctx context.Context, client clientset.Interface, arm, before string) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		h := leaseHolder(ctx, client, arm)
		return h != "" && h != before, nil
	})
}
