package cluster

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fastpv/pv-controller-manager/test/harness/faultproxy"
)

// WriteReport writes both arms side by side, in markdown.
func WriteReport(w io.Writer, cfg Config, arms []*ArmResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Cluster torture, seed %d\n\n", cfg.Seed)
	fmt.Fprintf(&b, "Per arm: %s of workload at %.1f operations/s and faults, %d binder replicas (a random one SIGKILLed every ~%s, down up to %s), "+
		"an outage of every write for %s every ~%s; %s; then faults stop and the run settles (nothing changed for %s, at most %s). "+
		"Proxy rates: 500 %.2f, 503 %.2f, 429 %.2f, reset %.2f, write applied with its answer lost %.2f, watch cut %.2f, watch 410 %.2f.\n\n",
		cfg.Duration, cfg.OpsPerSecond, cfg.Replicas, cfg.KillEvery, cfg.MaxDown, cfg.OutageLength, cfg.OutageEvery, planeFaults(cfg), cfg.SettleQuiet, cfg.SettleMax,
		cfg.Rates.Refused500, cfg.Rates.Refused503, cfg.Rates.Throttled429, cfg.Rates.Reset, cfg.Rates.LostAnswer, cfg.Rates.WatchCut, cfg.Rates.WatchGone)
	row := func(name string, f func(*ArmResult) string) {
		fmt.Fprintf(&b, "| %s |", name)
		for _, a := range arms {
			fmt.Fprintf(&b, " %s |", f(a))
		}
		b.WriteString("\n")
	}
	b.WriteString("|  |")
	for _, a := range arms {
		fmt.Fprintf(&b, " %s |", a.Arm)
	}
	b.WriteString("\n|---|")
	for range arms {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	row("**invariant violations**", func(a *ArmResult) string { return fmt.Sprintf("**%d**", len(a.Violations)) })
	row("settled / time to settle after the faults", func(a *ArmResult) string {
		return fmt.Sprintf("%t / %s", a.Settled, a.SettleTime.Round(100*time.Millisecond))
	})
	row("checker: conditions its caches showed that a live read did not (informer lag, not counted)", func(a *ArmResult) string {
		return fmt.Sprint(a.CheckerLag)
	})
	row("cleanup after the arm", func(a *ArmResult) string {
		if a.CleanupError == "" {
			return "done"
		}
		return "incomplete: " + a.CleanupError
	})
	row("claims at the end / Bound / ever Bound", func(a *ArmResult) string { return fmt.Sprintf("%d / %d / %d", a.Claims, a.Bound, a.BoundEver) })
	row("ever Bound by class: static / WaitForFirstConsumer / provisioned", func(a *ArmResult) string {
		return fmt.Sprintf("%d / %d / %d", a.BoundByClass[KindStatic], a.BoundByClass[KindWFFC], a.BoundByClass[KindProvisioned])
	})
	row("binder writes forwarded (applied) / per claim ever Bound", func(a *ArmResult) string {
		w := a.Faults[faultproxy.ForwardedWrites]
		return fmt.Sprintf("%d / %.2f", w, float64(w)/float64(max(a.BoundEver, 1)))
	})
	row("binder SIGKILLs / exits on a lost Lease (restarted) / outages", func(a *ArmResult) string {
		return fmt.Sprintf("%d / %d / %d", a.Kills, a.Exits, a.Outages)
	})
	row("kube-apiserver / etcd SIGKILLed and restarted / etcd compactions", func(a *ArmResult) string {
		return fmt.Sprintf("%d / %d / %d", a.Restarts[ComponentAPIServer], a.Restarts[ComponentEtcd], a.Compactions)
	})
	row("kube-scheduler / kube-controller-manager exited by themselves (started again)", func(a *ArmResult) string {
		return fmt.Sprintf("%d / %d", a.ComponentExits["kube-scheduler"], a.ComponentExits["kube-controller-manager"])
	})
	faults := map[string]bool{}
	ops := map[string]bool{}
	for _, a := range arms {
		for k := range a.Faults {
			faults[k] = true
		}
		for k := range a.Ops {
			ops[k] = true
		}
	}
	for _, k := range sorted(faults) {
		row("proxy: "+k, func(a *ArmResult) string { return fmt.Sprint(a.Faults[k]) })
	}
	for _, k := range sorted(ops) {
		row("op: "+k, func(a *ArmResult) string { return fmt.Sprint(a.Ops[k]) })
	}
	row("workload calls that failed", func(a *ArmResult) string { return fmt.Sprint(a.OpErrors) })
	for _, a := range arms {
		fmt.Fprintf(&b, "\n## Violations, %s\n\n", a.Arm)
		if len(a.Violations) == 0 {
			b.WriteString("None.\n")
		}
		for _, v := range a.Violations {
			fmt.Fprintf(&b, "- %s\n", v)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func planeFaults(cfg Config) string {
	if cfg.ClusterDir == "" {
		return "the control plane left alone"
	}
	return fmt.Sprintf("the apiserver or etcd SIGKILLed every ~%s (down up to %s), etcd compacted every ~%s", cfg.RestartEvery, cfg.MaxRestartDown, cfg.CompactEvery)
}
