// Command pv-rollout switches a control-plane node between KCM's PersistentVolume binder and
// pv-controller-manager by editing static pod manifests (docs/operators/rollout.md). deploy/rollout.sh runs it.
//
//	pv-rollout enable    [flags]   KCM without its binder, our static pod installed (original backed up)
//	pv-rollout disable   [flags]   our static pod removed, KCM's manifest restored byte for byte
//	pv-rollout shadow    [flags]   our static pod with --shadow beside KCM's binder, KCM untouched
//	pv-rollout status    [flags]   which binder runs, on which node; exit 1 when none does
//	pv-rollout uninstall [flags]   disable, then this node's identity; --cluster: our API objects
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fastpv/pv-controller-manager/deploy"
	"github.com/fastpv/pv-controller-manager/pkg/rollout"
)

func main() {
	fs := flag.NewFlagSet("pv-rollout", flag.ContinueOnError)
	o := rollout.Options{Log: func(format string, args ...any) { fmt.Fprintf(os.Stderr, "pv-rollout: "+format+"\n", args...) }}
	fs.StringVar(&o.ManifestsDir, "manifests-dir", "/etc/kubernetes/manifests", "the kubelet's static pod directory (staticPodPath)")
	fs.StringVar(&o.BackupDir, "backup-dir", "/etc/kubernetes/pv-controller-manager-backup", "where KCM's original manifest is kept; must not be the static pod directory")
	manifest := fs.String("manifest", "", "our static pod manifest to install (default: the one built in, deploy/static-pod/pv-controller-manager.yaml)")
	fs.StringVar(&o.Image, "image", "", "image for our static pod, as pushed to your registry (required unless --manifest names one)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "say what would change, change nothing")
	fs.DurationVar(&o.WaitTimeout, "wait-timeout", 3*time.Minute, "enable: how long to wait for our pod to be ready to bind before KCM's binder is turned off, and then for a binder to run (else KCM's is turned back on); disable: for KCM to run its binder before our pod is removed (0: do not wait)")
	fs.DurationVar(&o.Settle, "settle", 10*time.Second, "how long each wait's condition must hold in a row")
	kubeconfig := fs.String("kubeconfig", "/etc/kubernetes/admin.conf", "a kubeconfig that can read pods, their logs and Leases in kube-system (status, uninstall --cluster: also what they read and delete)")
	nodeName := fs.String("node-name", "", "this node's name as the kubelet registered it (default: the host name)")
	healthURL := fs.String("health-url", "https://127.0.0.1:10267/readyz?exclude=upstream-binder", "enable: our pod's endpoint on this node that says it is ready to bind (its caches synced with its own identity)")
	kcmHealthURL := fs.String("kcm-health-url", "https://127.0.0.1:10257/healthz", "KCM's health endpoint on this node")
	canaryNamespace := fs.String("canary-namespace", "", "status: also create a pre-bound PV/claim pair in this namespace, wait for it to bind, and delete it")
	canaryTimeout := fs.Duration("canary-timeout", 2*time.Minute, "status: how long the canary claim may take to bind")
	cluster := fs.Bool("cluster", false, "uninstall: delete our API objects (RBAC, FlowSchemas, monitoring objects, Leases) instead of this node's files; refused while a pod of ours runs")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: pv-rollout enable|disable|shadow|status|uninstall [flags]")
		fs.PrintDefaults()
	}
	actions := []string{"enable", "disable", "shadow", "status", "uninstall"}
	if len(os.Args) < 2 || !slices.Contains(actions, os.Args[1]) {
		fs.Usage()
		os.Exit(2)
	}
	action := os.Args[1]
	if err := fs.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "pv-rollout: unexpected arguments %q\n", fs.Args())
		os.Exit(2)
	}
	if o.Settle < 0 {
		fmt.Fprintf(os.Stderr, "pv-rollout: --settle=%s: must not be negative\n", o.Settle)
		os.Exit(2)
	}
	if err := misplacedFlag(fs, action); err != nil {
		fmt.Fprintf(os.Stderr, "pv-rollout: %v\n", err)
		os.Exit(2)
	}
	if action == "status" {
		os.Exit(status(*kubeconfig, *canaryNamespace, *canaryTimeout))
	}
	if action == "uninstall" && *cluster {
		os.Exit(uninstallCluster(*kubeconfig, o.DryRun))
	}
	o.OurManifest = deploy.StaticPodManifest
	if *manifest != "" {
		data, err := os.ReadFile(*manifest)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pv-rollout: --manifest: %v\n", err)
			os.Exit(2)
		}
		o.OurManifest = data
	}
	if o.WaitTimeout < 0 {
		fmt.Fprintf(os.Stderr, "pv-rollout: --wait-timeout=%s: must not be negative (0 does not wait)\n", o.WaitTimeout)
		os.Exit(2)
	}
	podName, kubeconfigPath, err := rollout.ManifestInfo(o.OurManifest)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pv-rollout: %v\n", err)
		os.Exit(2)
	}
	waits := o.WaitTimeout > 0 && !o.DryRun
	switch action {
	case "enable":
		o.KubeconfigPath = kubeconfigPath
		if waits {
			client, err := newClient(*kubeconfig)
			if err != nil {
				fmt.Fprintf(os.Stderr, "pv-rollout: %v (--wait-timeout=0 skips the wait; KCM's binder is then turned off without knowing that ours runs)\n", err)
				os.Exit(2)
			}
			if o.Check, err = podCheck(client, *nodeName, podName, *healthURL); err != nil {
				fmt.Fprintf(os.Stderr, "pv-rollout: %v\n", err)
				os.Exit(2)
			}
			if o.KCMCheck, err = podCheck(client, *nodeName, "kube-controller-manager", *kcmHealthURL); err != nil {
				fmt.Fprintf(os.Stderr, "pv-rollout: %v\n", err)
				os.Exit(2)
			}
			o.BinderCheck = rollout.BinderRunsCheck(client)
		}
	case "disable", "uninstall":
		o.KubeconfigPath = kubeconfigPath
		// A rollback must work when nothing can read the API: without a client it does not wait.
		if waits {
			client, err := newClient(*kubeconfig)
			var check rollout.PodCheck
			if err == nil {
				check, err = podCheck(client, *nodeName, "kube-controller-manager", *kcmHealthURL)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "pv-rollout: not waiting for KCM before removing our pod: %v\n", err)
			} else {
				o.KCMCheck = check
			}
		}
	}
	run := map[string]func(rollout.Options) error{"enable": rollout.Enable, "disable": rollout.Disable, "shadow": rollout.Shadow, "uninstall": rollout.UninstallNode}[action]
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "pv-rollout: %s failed: %v\n", action, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "pv-rollout: %s done\n", action)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	config.UserAgent = "pv-rollout"
	return config, nil
}

func newClient(kubeconfig string) (kubernetes.Interface, error) {
	config, err := restConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(config)
}

// status prints which binder runs (and runs the canary when asked); its exit code: 0 when a
// binder runs (and the canary bound), 1 when none does (or the canary did not bind), 2 when the
// state could not be read.
func status(kubeconfig, canaryNamespace string, canaryTimeout time.Duration) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := newClient(kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pv-rollout: %v\n", err)
		return 2
	}
	st, err := rollout.Observe(ctx, client, time.Now())
	if err != nil {
		fmt.Fprintf(os.Stderr, "pv-rollout: status: %v\n", err)
		return 2
	}
	code := 0
	if canaryNamespace != "" {
		took, err := rollout.Canary(ctx, client, canaryNamespace, canaryTimeout)
		if err != nil {
			fmt.Fprintf(os.Stdout, "canary: %v\n", err)
			code = 1
		} else {
			fmt.Fprintf(os.Stdout, "canary: a pre-bound claim in %s was Bound after %s (claim and volume deleted)\n", canaryNamespace, took.Round(10*time.Millisecond))
		}
	}
	st.Print(os.Stdout)
	if st.Binder == rollout.BinderNone {
		code = 1
	}
	return code
}

// uninstallCluster deletes our API objects once no pod of ours runs.
func uninstallCluster(kubeconfig string, dryRun bool) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	config, err := restConfig(kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pv-rollout: %v\n", err)
		return 2
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pv-rollout: %v\n", err)
		return 2
	}
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pv-rollout: %v\n", err)
		return 2
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "pv-rollout: "+format+"\n", args...) }
	if err := rollout.UninstallCluster(ctx, client, dyn, dryRun, logf); err != nil {
		fmt.Fprintf(os.Stderr, "pv-rollout: uninstall --cluster failed: %v\n", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "pv-rollout: uninstall --cluster done")
	return 0
}

// podCheck watches a static pod's mirror pod through client and its health URL on this node.
func podCheck(client kubernetes.Interface, nodeName, podName, healthURL string) (rollout.PodCheck, error) {
	if nodeName == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("--node-name: %w", err)
		}
		nodeName = strings.ToLower(host) // the kubelet's default node name
	}
	c := &rollout.StaticPodCheck{Client: client, Namespace: "kube-system", PodName: podName, NodeName: nodeName, HealthURL: healthURL}
	return c.Check, nil
}

// misplacedFlag refuses, rather than ignores, a flag set on the command line that belongs to
// another action: nothing is done with input that was meant for something else.
func misplacedFlag(fs *flag.FlagSet, action string) error {
	only := map[string]string{"canary-namespace": "status", "canary-timeout": "status", "cluster": "uninstall"}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if want, ok := only[f.Name]; ok && want != action && err == nil {
			err = fmt.Errorf("--%s is a flag of %s, not of %s", f.Name, want, action)
		}
	})
	return err
}
