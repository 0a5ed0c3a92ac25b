// Command pv-rollout switches a control-plane node between KCM's PersistentVolume binder and
// pv-controller-manager by editing static pod manifests (docs/operators/rollout.md). deploy/rollout.sh runs it.
//
//	pv-rollout enable  [flags]   KCM without its binder, our static pod installed (original backed up)
//	pv-rollout disable [flags]   our static pod removed, KCM's manifest restored byte for byte
//	pv-rollout shadow  [flags]   our static pod with --shadow beside KCM's binder, KCM untouched
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
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
	fs.DurationVar(&o.WaitTimeout, "wait-timeout", 3*time.Minute, "enable: how long to wait for our pod to run its image and answer /healthz before KCM's binder is turned off; disable: for KCM to run its binder before our pod is removed (0: do not wait)")
	kubeconfig := fs.String("kubeconfig", "/etc/kubernetes/admin.conf", "a kubeconfig that can read pods and their logs in kube-system, to watch the static pods come up")
	nodeName := fs.String("node-name", "", "this node's name as the kubelet registered it (default: the host name)")
	healthURL := fs.String("health-url", "https://127.0.0.1:10267/healthz", "enable: our pod's health endpoint on this node")
	kcmHealthURL := fs.String("kcm-health-url", "https://127.0.0.1:10257/healthz", "disable: KCM's health endpoint on this node")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: pv-rollout enable|disable|shadow [flags]")
		fs.PrintDefaults()
	}
	if len(os.Args) < 2 || (os.Args[1] != "enable" && os.Args[1] != "disable" && os.Args[1] != "shadow") {
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
			check, err := podCheck(*kubeconfig, *nodeName, podName, *healthURL)
			if err != nil {
				fmt.Fprintf(os.Stderr, "pv-rollout: %v (--wait-timeout=0 skips the wait; KCM's binder is then turned off without knowing that ours runs)\n", err)
				os.Exit(2)
			}
			o.Check = check
		}
	case "disable":
		// A rollback must work when nothing can read the API: without a client it does not wait.
		if waits {
			check, err := podCheck(*kubeconfig, *nodeName, "kube-controller-manager", *kcmHealthURL)
			if err != nil {
				fmt.Fprintf(os.Stderr, "pv-rollout: not waiting for KCM before removing our pod: %v\n", err)
			} else {
				o.KCMCheck = check
			}
		}
	}
	run := map[string]func(rollout.Options) error{"enable": rollout.Enable, "disable": rollout.Disable, "shadow": rollout.Shadow}[action]
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "pv-rollout: %s failed: %v\n", action, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "pv-rollout: %s done\n", action)
}

// podCheck watches a static pod's mirror pod through kubeconfig and its health URL on this node.
func podCheck(kubeconfig, nodeName, podName, healthURL string) (rollout.PodCheck, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
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
