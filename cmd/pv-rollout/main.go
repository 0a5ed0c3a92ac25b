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

	"github.com/fastpv/pv-controller-manager/deploy"
	"github.com/fastpv/pv-controller-manager/pkg/rollout"
)

func main() {
	fs := flag.NewFlagSet("pv-rollout", flag.ContinueOnError)
	o := rollout.Options{Log: func(format string, args ...any) { fmt.Fprintf(os.Stderr, "pv-rollout: "+format+"\n", args...) }}
	fs.StringVar(&o.ManifestsDir, "manifests-dir", "/etc/kubernetes/manifests", "the kubelet's static pod directory (staticPodPath)")
	fs.StringVar(&o.BackupDir, "backup-dir", "/etc/kubernetes/pv-controller-manager-backup", "where KCM's original manifest is kept; must not be the static pod directory")
	manifest := fs.String("manifest", "", "our static pod manifest to install (default: the one built in, deploy/static-pod/pv-controller-manager.yaml)")
	fs.StringVar(&o.Image, "image", "", "image for our static pod (default: the manifest's)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "say what would change, change nothing")
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
	run := map[string]func(rollout.Options) error{"enable": rollout.Enable, "disable": rollout.Disable, "shadow": rollout.Shadow}[action]
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "pv-rollout: %s failed: %v\n", action, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "pv-rollout: %s done\n", action)
}
