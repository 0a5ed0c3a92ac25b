package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/fastpv/pv-controller-manager/test/harness/faultproxy"
	"github.com/fastpv/pv-controller-manager/test/invariants"
)

// Config of one arm's run.
type Config struct {
	Arm string
	// Kubeconfig is the cluster's admin kubeconfig: the workload, the checker and the proxy use it.
	Kubeconfig string
	// BinDir holds our binaries (make build), ToolsBin the upstream ones (kube-controller-manager).
	BinDir, ToolsBin string
	// WorkDir receives the binders' logs and the proxy's kubeconfig.
	WorkDir   string
	Namespace string
	Seed      uint64
	// Duration of the faults and the workload; then faults stop and the run settles.
	Duration time.Duration
	// OpsPerSecond of the workload.
	OpsPerSecond float64
	Rates        faultproxy.Rates
	// Replicas of the binder; KillEvery is the mean time between SIGKILLs of a random replica
	// (0: none), each down for up to MaxDown.
	Replicas  int
	KillEvery time.Duration
	MaxDown   time.Duration
	// OutageEvery is the mean time between outages (every write refused) of OutageLength (0: none).
	OutageEvery, OutageLength time.Duration
	// SettleQuiet: settled once nothing changed that long; SettleMax bounds the wait.
	SettleQuiet, SettleMax time.Duration
	// ClusterDir is kwokctl's directory of the cluster (pids/, logs/): with it, the control
	// plane is crashed too. RestartEvery is the mean time between SIGKILLs of the apiserver or
	// etcd (drawn at random; 0: none), each down for up to MaxRestartDown; CompactEvery the mean
	// time between compactions of etcd to its current revision (0: none).
	ClusterDir                   string
	RestartEvery, MaxRestartDown time.Duration
	CompactEvery                 time.Duration
}

// ArmResult is what one arm's run measured.
type ArmResult struct {
	// CleanupError: the arm's objects could not all be deleted after it (the result stands).
	CleanupError string
	// CheckerLag: conditions the checker's caches showed for long enough that a live read did not.
	CheckerLag int
	Arm        string
	Seed       uint64
	Duration   time.Duration
	Ops        map[string]int
	OpErrors   int
	Faults     map[string]int64
	Kills      int
	Exits      int
	Outages    int
	// Restarts of control-plane components by name; Compactions of etcd; ComponentExits: the
	// supervised components (kube-scheduler, kube-controller-manager) that exited by themselves
	// and were started again, by name.
	Restarts       map[string]int
	ComponentExits map[string]int
	Compactions    int
	Violations     []invariants.Violation
	// Claims at the end, Bound at the end, claims ever seen Bound.
	Claims, Bound, BoundEver int
	// BoundByClass: claims ever Bound by storage class.
	BoundByClass map[string]int
	// Settled: nothing changed for SettleQuiet; SettleTime from the end of the faults to the last change.
	Settled    bool
	SettleTime time.Duration
}

// RunArm runs one arm against the cluster.
func RunArm(ctx context.Context, cfg Config) (*ArmResult, error) {
	logger := klog.FromContext(ctx)
	restConfig, client, err := adminClient(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return nil, err
	}
	if err := ensureNamespace(ctx, client, cfg.Namespace); err != nil {
		return nil, err
	}
	run := fmt.Sprintf("%s%d", cfg.Arm[:2], cfg.Seed)
	if err := ensureClasses(ctx, client, runClasses(run), map[string]string{"torture": run}); err != nil {
		return nil, err
	}
	nodes, err := listNodes(ctx, client)
	if err != nil {
		return nil, err
	}
	var plane *controlPlane
	if cfg.ClusterDir != "" {
		if plane, err = newControlPlane(cfg.ClusterDir, client); err != nil {
			return nil, err
		}
	}
	env, err := startProxy(cfg, restConfig)
	if err != nil {
		return nil, err
	}
	defer env.close()
	proxy := env.proxy

	checkCtx, stopChecker := context.WithCancel(ctx)
	defer stopChecker()
	check := newChecker(runClasses(run))
	if err := check.start(checkCtx, client, cfg.Namespace, run); err != nil {
		return nil, err
	}
	binders, err := env.startBinders(cfg, max(cfg.Replicas, 1), true)
	if err != nil {
		return nil, err
	}
	defer binders.stopAll()

	res := &ArmResult{Arm: cfg.Arm, Seed: cfg.Seed, Duration: cfg.Duration}
	if plane != nil {
		superviseCtx, stopSupervising := context.WithCancel(ctx)
		defer stopSupervising()
		go plane.supervise(superviseCtx, 2*time.Second)
	}
	work := newWorkload(client, cfg.Namespace, run, cfg.Seed, nodes)
	chaos := rand.New(rand.NewPCG(cfg.Seed^0xc4a05, cfg.Seed))
	between := func(mean time.Duration) <-chan time.Time {
		return time.After(time.Duration(float64(mean) * (0.5 + chaos.Float64())))
	}
	faultsCtx, stopFaults := context.WithTimeout(ctx, cfg.Duration)
	defer stopFaults()
	ops := time.NewTicker(time.Duration(float64(time.Second) / max(cfg.OpsPerSecond, 0.1)))
	defer ops.Stop()
	var kill, outage, restart, compact <-chan time.Time
	if cfg.KillEvery > 0 {
		kill = between(cfg.KillEvery)
	}
	if plane != nil && cfg.RestartEvery > 0 {
		restart = between(cfg.RestartEvery)
	}
	if plane != nil && cfg.CompactEvery > 0 {
		compact = between(cfg.CompactEvery)
	}
	if cfg.OutageEvery > 0 {
		outage = between(cfg.OutageEvery)
	}
	logger.Info("Cluster torture: faults and workload", "arm", cfg.Arm, "seed", cfg.Seed, "duration", cfg.Duration)
loop:
	for {
		select {
		case <-faultsCtx.Done():
			break loop
		case <-ops.C:
			work.step(faultsCtx, check)
		case <-kill:
			down := time.Duration(chaos.Int64N(int64(max(cfg.MaxDown, time.Millisecond))))
			if err := binders.killAndRestart(chaos.IntN(len(binders.procs)), down); err != nil {
				return nil, err
			}
			kill = between(cfg.KillEvery)
		case <-outage:
			proxy.SetOutage(true)
			res.Outages++
			select {
			case <-faultsCtx.Done():
			case <-time.After(cfg.OutageLength):
			}
			proxy.SetOutage(false)
			outage = between(cfg.OutageEvery)
		case <-restart:
			component := []string{ComponentAPIServer, ComponentEtcd}[chaos.IntN(2)]
			down := time.Duration(chaos.Int64N(int64(max(cfg.MaxRestartDown, time.Millisecond))))
			logger.Info("Cluster torture: crashing a control-plane component", "component", component, "down", down)
			if err := plane.restart(ctx, component, down); err != nil {
				return nil, err
			}
			restart = between(cfg.RestartEvery)
		case <-compact:
			if err := plane.compact(ctx); err != nil {
				logger.Error(err, "Cluster torture: compacting etcd") // etcd may be down: counted only when done
			}
			compact = between(cfg.CompactEvery)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	// Faults stop; the binder settles.
	proxy.SetFaults(false)
	proxy.SetOutage(false)
	stopped := time.Now()
	deadline := stopped.Add(cfg.SettleMax)
	// Quiet counts from the end of the faults at the earliest: a run whose last seconds had the
	// binder down (a control-plane crash near the end) is quiet, not settled: counted from its last
	// change, it would be declared settled at once while its apiserver restarts.
	quiet := func() time.Duration { return min(check.quietFor(), time.Since(stopped)) }
	for time.Now().Before(deadline) && quiet() < cfg.SettleQuiet && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	res.Settled = quiet() >= cfg.SettleQuiet
	res.SettleTime = max(time.Since(stopped)-quiet(), 0)
	check.scan(true)
	res.Violations, res.Claims, res.Bound, res.BoundEver, res.BoundByClass = check.result()
	// Only a settled run is judged (an unsettled one fails anyway); a read that fails leaves the
	// placement unchecked, said in the log, and the result stands.
	if res.Settled {
		left, err := waitPlaced(ctx, client, cfg.Namespace, runClasses(run), placementWait)
		if err != nil {
			logger.Error(err, "Cluster torture: the WaitForFirstConsumer placement could not be checked", "arm", cfg.Arm)
		}
		for _, l := range left {
			res.Violations = append(res.Violations, invariants.Violation{Rule: ruleUnplaced, Detail: l})
		}
	}
	res.CheckerLag = check.lagged()
	res.Ops, res.OpErrors = work.snapshot()
	res.Faults = proxy.Counts()
	for _, p := range binders.panicked() {
		res.Violations = append(res.Violations, invariants.Violation{Rule: rulePanicked, Detail: p})
	}
	res.Kills = binders.kills
	res.Exits = binders.exits
	if plane != nil {
		res.Restarts, res.Compactions, res.ComponentExits = plane.restarts, plane.compactions, plane.exited()
	}
	logger.Info("Cluster torture: arm done", "arm", cfg.Arm, "violations", len(res.Violations), "settled", res.Settled, "settleTime", res.SettleTime)
	// The next arm's objects must not meet this one's (its classes keep them apart anyway), so a
	// cleanup that fails costs the next arm nothing and must not cost this arm its result (the
	// first such failure lost a 30-minute run's report: deleting 6000 volumes timed out).
	if err := cleanup(ctx, client, cfg.Namespace, run); err != nil {
		logger.Error(err, "Cluster torture: cleanup incomplete; the result stands", "arm", cfg.Arm)
		res.CleanupError = err.Error()
	}
	return res, nil
}

// armEnv is the proxy in front of the apiserver and the kubeconfig that leads the binder to it.
type armEnv struct {
	proxy      *faultproxy.Proxy
	server     *http.Server
	kubeconfig string
}

func (e *armEnv) close() { _ = e.server.Close() }

// startProxy starts the proxy: the binder's only way to the apiserver.
func startProxy(cfg Config, restConfig *rest.Config) (*armEnv, error) {
	target, err := url.Parse(restConfig.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(restConfig)
	if err != nil {
		return nil, err
	}
	proxy := faultproxy.New(faultproxy.Config{Target: target, Transport: transport, Rates: cfg.Rates, Seed: cfg.Seed})
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	server := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.Serve(listener) }()
	kubeconfig := filepath.Join(cfg.WorkDir, cfg.Arm+"-proxy.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: "http://%s"}}]
contexts: [{name: proxy, context: {cluster: proxy, user: proxy}}]
users: [{name: proxy, user: {}}]
current-context: proxy
`, listener.Addr())), 0o600); err != nil {
		_ = server.Close()
		return nil, err
	}
	return &armEnv{proxy: proxy, server: server, kubeconfig: kubeconfig}, nil
}

// startBinders starts n replicas of cfg.Arm's binder behind the proxy.
func (e *armEnv) startBinders(cfg Config, n int, fastLease bool) (*replicas, error) {
	args, err := binderCommand(cfg.Arm, cfg.BinDir, cfg.ToolsBin, e.kubeconfig, cfg.Kubeconfig, fastLease)
	if err != nil {
		return nil, err
	}
	return newReplicas(cfg.Arm, args, cfg.WorkDir, n)
}

// adminClient is the cluster's admin client (the workload and the checker: never through the proxy).
func adminClient(cfg Config) (*rest.Config, clientset.Interface, error) {
	restConfig, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	restConfig.QPS, restConfig.Burst = 200, 400
	client, err := clientset.NewForConfig(restConfig)
	return restConfig, client, err
}

func ensureNamespace(ctx context.Context, client clientset.Interface, name string) error {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// cleanup deletes the run's pods, claims and volumes, without waiting: thousands of claims take
// minutes to go (KCM removes their protection finalizers at its client QPS), and the run's classes
// (kept, so that what is left is not a claim of a missing class) keep the rest from matching the
// next run's objects.
func cleanup(ctx context.Context, client clientset.Interface, namespace, run string) error {
	selector := metav1.ListOptions{LabelSelector: "torture=" + run}
	deletes := []func(context.Context) error{
		func(ctx context.Context) error {
			return client.CoreV1().Pods(namespace).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, selector)
		},
		func(ctx context.Context) error {
			return client.CoreV1().PersistentVolumeClaims(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, selector)
		},
		func(ctx context.Context) error {
			return client.CoreV1().PersistentVolumes().DeleteCollection(ctx, metav1.DeleteOptions{}, selector)
		},
	}
	for _, del := range deletes {
		// A collection of thousands can outlast the apiserver's request timeout; the deletion goes
		// on server-side, and asking again deletes what is left.
		if err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
			err := del(ctx)
			if apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) {
				return false, nil
			}
			return err == nil, err
		}); err != nil {
			return err
		}
	}
	return nil
}
