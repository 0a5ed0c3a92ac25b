// Command pv-torture runs the cluster torture (test/torture/cluster) against a local cluster whose
// KCM runs without its binder: both arms, one after the other, on the same seed, and writes the
// report. It exits 1 when ours violated an invariant or did not settle. Used by make torture-cluster.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/fastpv/pv-controller-manager/test/harness/faultproxy"
	"github.com/fastpv/pv-controller-manager/test/torture/cluster"
)

func main() {
	var cfg cluster.Config
	var arms, report, mode string
	var rec cluster.RecoveryConfig
	flag.StringVar(&cfg.Kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "the cluster's admin kubeconfig")
	flag.StringVar(&cfg.BinDir, "bin-dir", "bin", "where pv-controller-manager is (make build)")
	flag.StringVar(&cfg.ToolsBin, "tools-bin", "_output/tools/bin", "where kube-controller-manager is (hack/cluster/build-tools.sh)")
	flag.StringVar(&cfg.WorkDir, "work-dir", "_output/torture-cluster", "binder logs and the proxy's kubeconfig")
	flag.StringVar(&cfg.Namespace, "namespace", "torture", "namespace of the claims")
	flag.StringVar(&arms, "arms", "upstream,ours", "arms to run, in order")
	flag.StringVar(&report, "report", "", "write the markdown report here (default: WORK_DIR/report.md)")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()%1_000_000), "seed of the workload, the faults and the kills (default: from the clock, printed)")
	flag.DurationVar(&cfg.Duration, "duration", 5*time.Minute, "faults and workload per arm, before settling")
	flag.Float64Var(&cfg.OpsPerSecond, "ops", 10, "workload operations per second")
	flag.IntVar(&cfg.Replicas, "replicas", 2, "binder replicas (leader election)")
	flag.DurationVar(&cfg.KillEvery, "kill-every", 20*time.Second, "mean time between SIGKILLs of a random replica (0: none)")
	flag.DurationVar(&cfg.MaxDown, "max-down", 3*time.Second, "a killed replica restarts within this")
	flag.DurationVar(&cfg.OutageEvery, "outage-every", 60*time.Second, "mean time between outages that refuse every write (0: none)")
	flag.DurationVar(&cfg.OutageLength, "outage-length", 5*time.Second, "length of an outage")
	flag.DurationVar(&cfg.SettleQuiet, "settle-quiet", 30*time.Second, "settled once nothing changed that long")
	flag.DurationVar(&cfg.SettleMax, "settle-max", 5*time.Minute, "give up settling after this")
	flag.StringVar(&cfg.ClusterDir, "cluster-dir", "", "kwokctl's directory of the cluster (pids/, logs/): crash and restart its apiserver and etcd, compact etcd (empty: none of these)")
	flag.DurationVar(&cfg.RestartEvery, "restart-every", 90*time.Second, "with --cluster-dir: mean time between SIGKILLs of the apiserver or etcd (0: none)")
	flag.DurationVar(&cfg.MaxRestartDown, "max-restart-down", 5*time.Second, "a crashed apiserver or etcd restarts within this")
	flag.DurationVar(&cfg.CompactEvery, "compact-every", 45*time.Second, "with --cluster-dir: mean time between compactions of etcd to its current revision (0: none)")
	flag.Float64Var(&cfg.Rates.Refused500, "rate-500", 0.02, "share of requests answered 500")
	flag.Float64Var(&cfg.Rates.Refused503, "rate-503", 0.02, "share of requests answered 503")
	flag.Float64Var(&cfg.Rates.Throttled429, "rate-429", 0.02, "share of requests answered 429 with Retry-After")
	flag.Float64Var(&cfg.Rates.Reset, "rate-reset", 0.02, "share of requests whose connection is reset before forwarding")
	flag.Float64Var(&cfg.Rates.LostAnswer, "rate-lost", 0.05, "share of writes applied whose answer is lost")
	flag.Float64Var(&cfg.Rates.WatchCut, "rate-watch-cut", 0.3, "share of watches cut after a random time (up to 30s)")
	flag.Float64Var(&cfg.Rates.WatchGone, "rate-watch-410", 0.1, "share of watches answered 410 Gone")
	flag.StringVar(&mode, "mode", "all", "torture (the random workload with faults and kills), recovery (pre-bound pairs without faults, with an outage, with random faults), or all")
	flag.IntVar(&rec.Pairs, "recovery-pairs", 1000, "recovery: pre-bound pairs per run")
	flag.DurationVar(&rec.OutageAt, "recovery-outage-at", 3*time.Second, "recovery: the outage starts this long after the first create")
	flag.DurationVar(&rec.Outage, "recovery-outage", 5*time.Second, "recovery: length of the outage")
	klog.InitFlags(nil)
	flag.Parse()
	cfg.Seed = *seed
	if report == "" {
		report = cfg.WorkDir + "/report.md"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("pv-torture: seed %d (replay: --seed %d)\n", cfg.Seed, cfg.Seed)
	rec.Config = cfg
	code, err := run(ctx, cfg, rec, mode, strings.Split(arms, ","), report)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pv-torture:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func run(ctx context.Context, cfg cluster.Config, rec cluster.RecoveryConfig, mode string, arms []string, report string) (int, error) {
	if mode != "all" && mode != "torture" && mode != "recovery" {
		return 2, fmt.Errorf("--mode: %q is not torture, recovery or all", mode)
	}
	var results []*cluster.ArmResult
	var recoveries []*cluster.RecoveryResult
	code := 0
	for _, arm := range arms {
		if mode == "torture" {
			break
		}
		c := rec
		c.Arm = arm
		r, err := cluster.RunRecovery(ctx, c)
		if err != nil {
			return 2, fmt.Errorf("recovery, arm %s: %w", arm, err)
		}
		recoveries = append(recoveries, r)
		fmt.Printf("%s recovery: fault-free %s, outage %s, faults %s, unbound %d\n", arm, r.FaultFree.Round(100*time.Millisecond),
			r.WithOutage.Round(100*time.Millisecond), r.WithFaults.Round(100*time.Millisecond), r.Unbound)
	}
	for _, arm := range arms {
		if mode == "recovery" {
			break
		}
		c := cfg
		c.Arm = arm
		r, err := cluster.RunArm(ctx, c)
		if err != nil {
			return 2, fmt.Errorf("arm %s: %w", arm, err)
		}
		results = append(results, r)
		fmt.Printf("%s: %d violations, settled %t after %s; %d claims ever Bound; %d kills; restarts %v, exits %v, %d compactions; proxy %s\n", arm, len(r.Violations), r.Settled,
			r.SettleTime.Round(100*time.Millisecond), r.BoundEver, r.Kills, r.Restarts, r.ComponentExits, r.Compactions, countsLine(r.Faults))
		for _, v := range r.Violations {
			fmt.Printf("  %s: %s\n", arm, v)
		}
		if arm == cluster.ArmOurs && (len(r.Violations) > 0 || !r.Settled) {
			code = 1
		}
	}
	f, err := os.Create(report)
	if err != nil {
		return 2, err
	}
	defer f.Close()
	if len(results) > 0 {
		if err := cluster.WriteReport(f, cfg, results); err != nil {
			return 2, err
		}
	}
	if len(recoveries) > 0 {
		if err := cluster.WriteRecoveryReport(f, rec, recoveries); err != nil {
			return 2, err
		}
	}
	fmt.Println("pv-torture: report in", report)
	return code, nil
}

func countsLine(c map[string]int64) string {
	return fmt.Sprintf("%d forwarded (%d writes), %d lost answers, %d refused, %d resets, %d watch cuts, %d watch 410s",
		c[faultproxy.Forwarded], c[faultproxy.ForwardedWrites], c[faultproxy.LostAnswer],
		c[faultproxy.Refused500]+c[faultproxy.Refused503]+c[faultproxy.Throttled429]+c[faultproxy.OutageRefuse],
		c[faultproxy.Reset], c[faultproxy.WatchCut], c[faultproxy.WatchGone])
}
