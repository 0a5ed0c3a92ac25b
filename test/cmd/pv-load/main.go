// Command pv-load creates a static PV/PVC workload on a cluster and reports claim->Bound
// latencies (see test/harness/loadgen). Used by `make demo` and `make bench`.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fastpv/pv-controller-manager/test/harness/loadgen"
)

func main() {
	var (
		kubeconfig = flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
		cfg        loadgen.Config
		qps        = flag.Float64("qps", 1000, "client QPS (burst is the same)")
		jsonOut    = flag.String("json", "", "write the result (summary and samples) as JSON to this file")
		cleanup    = flag.Bool("cleanup", true, "delete the objects after the run")
		noProgress = flag.Bool("quiet", false, "no progress bar")
		// Protobuf, as controllers use: JSON costs the apiserver more CPU per request, and that
		// CPU is taken from the binder under test on a small machine.
		contentType = flag.String("content-type", runtime.ContentTypeProtobuf, "content type of requests and watches (application/vnd.kubernetes.protobuf or application/json)")
	)
	flag.StringVar(&cfg.Scenario, "scenario", loadgen.ScenarioPrebound, scenarioHelp())
	list := flag.Bool("list", false, "print the scenarios, one per line: name, make bench's count variable, sync period (\"\" for the default), in make bench's default set, help; tab-separated")
	flag.StringVar(&cfg.Namespace, "namespace", "pv-load", "namespace of the claims (created if missing)")
	flag.StringVar(&cfg.Prefix, "prefix", "load", "name prefix and loadgen label value of the objects")
	flag.IntVar(&cfg.Count, "count", 300, "number of PV/PVC pairs")
	flag.IntVar(&cfg.Concurrency, "concurrency", 50, "concurrent clients creating objects")
	flag.DurationVar(&cfg.PVDelay, "pv-delay", 3*time.Second, "pvc-first: delay between the claims and their volumes")
	flag.StringVar(&cfg.Order, "order", loadgen.OrderPVFirst, "prebound, claimref: how each pair is created: pv-first | claim-first | together (both at once)")
	flag.IntVar(&cfg.Nodes, "nodes", 0, "wffc: wait for this many schedulable nodes before spreading the PVs over them (0: at least one)")
	flag.BoolVar(&cfg.WithPods, "with-pods", false, "prebound: also create a Pod per claim")
	flag.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "give up waiting for Bound after this long")
	flag.Parse()
	if *list {
		for _, s := range loadgen.Scenarios() {
			b := s.Bench()
			fmt.Printf("%s\t%s\t%s\t%t\t%s\n", s.Name(), b.Counts, b.SyncPeriod, b.Default, s.Help())
		}
		return
	}
	if err := run(*kubeconfig, *contentType, cfg, float32(*qps), *jsonOut, *cleanup, !*noProgress); err != nil {
		fmt.Fprintln(os.Stderr, "pv-load:", err)
		os.Exit(1)
	}
}

// scenarioHelp lists the registered scenarios for --scenario's help.
func scenarioHelp() string {
	var b strings.Builder
	b.WriteString("the load (pv-load --list):")
	for _, s := range loadgen.Scenarios() {
		fmt.Fprintf(&b, "\n  %s: %s", s.Name(), s.Help())
	}
	b.WriteString("\n  " + loadgen.ScenarioWriteCeiling + ": the apiserver's write throughput for the writes of a bind; run it with no binder")
	return b.String()
}

// waitForRunningPods polls the run's pods until all are Running or two minutes pass.
func waitForRunningPods(ctx context.Context, client clientset.Interface, cfg loadgen.Config) (int, time.Duration) {
	start := time.Now()
	running := 0
	for time.Since(start) < 2*time.Minute && ctx.Err() == nil {
		pods, err := client.CoreV1().Pods(cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "loadgen=" + cfg.Prefix})
		if err == nil {
			running = 0
			for _, pod := range pods.Items {
				if pod.Status.Phase == v1.PodRunning {
					running++
				}
			}
			if running == cfg.Count {
				break
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return running, time.Since(start)
}

func run(kubeconfig, contentType string, cfg loadgen.Config, qps float32, jsonOut string, cleanup, progress bool) error {
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	restConfig.QPS, restConfig.Burst = qps, int(qps)
	restConfig.UserAgent = "pv-load"
	switch contentType {
	case runtime.ContentTypeProtobuf:
		restConfig.ContentType, restConfig.AcceptContentTypes = contentType, contentType+","+runtime.ContentTypeJSON
	case runtime.ContentTypeJSON:
		restConfig.ContentType = contentType
	default:
		return fmt.Errorf("--content-type: %q is neither %s nor %s", contentType, runtime.ContentTypeProtobuf, runtime.ContentTypeJSON)
	}
	client, err := clientset.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cfg.Namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if progress {
		cfg.Progress = os.Stderr
	}
	if cfg.Scenario == loadgen.ScenarioWriteCeiling {
		return runCeiling(ctx, client, cfg, jsonOut, cleanup)
	}
	result, err := loadgen.Run(ctx, client, cfg)
	if err != nil {
		return err
	}
	fmt.Println(result.Summary())
	if cfg.WithPods {
		running, took := waitForRunningPods(ctx, client, cfg)
		fmt.Printf("pods Running: %d/%d (%s after the claims were all bound)\n", running, cfg.Count, took.Round(100*time.Millisecond))
	}
	verifyErr := loadgen.Verify(ctx, client, cfg)
	if verifyErr == nil {
		fmt.Println("verify: every volume is bound to exactly its own claim")
	}
	if err := writeJSON(jsonOut, result); err != nil {
		return err
	}
	if cleanup {
		if err := loadgen.Cleanup(context.Background(), client, cfg); err != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
	}
	if result.Unbound > 0 {
		return fmt.Errorf("%d claims were not Bound within %s", result.Unbound, cfg.Timeout)
	}
	return verifyErr
}

func runCeiling(ctx context.Context, client clientset.Interface, cfg loadgen.Config, jsonOut string, cleanup bool) error {
	result, err := loadgen.MeasureWriteCeiling(ctx, client, cfg)
	if err != nil {
		return err
	}
	fmt.Println(result.Summary())
	if err := writeJSON(jsonOut, result); err != nil {
		return err
	}
	if cleanup {
		return loadgen.Cleanup(ctx, client, cfg)
	}
	return nil
}

// writeJSON writes v, indented, to path; nothing when path is empty.
func writeJSON(path string, v any) error {
	if path == "" {
		return nil
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
