package pvcwhy

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fastpv/pv-controller-manager/pkg/version"
)

// Exit codes of the plugin.
const (
	ExitOK       = 0 // every claim asked about is Bound and not resizing
	ExitNotReady = 1 // at least one is not
	ExitError    = 2 // bad usage, unreadable input, claim not found, API error
)

// Main runs `kubectl pvc-why` with args (without the program name) and returns its exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("kubectl pvc-why", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		namespace     = fs.StringP("namespace", "n", "", "namespace of the claim (default: the kubeconfig context's)")
		allNamespaces = fs.BoolP("all-namespaces", "A", false, "every claim of every namespace that is not Bound (or is resizing)")
		output        = fs.StringP("output", "o", "text", "text or json")
		fromFile      = fs.String("from-file", "", "read objects from `kubectl get pvc,pv,sc,pods,events,nodes,leases -A -o yaml` output (- for stdin) instead of a cluster")
		kubeconfig    = fs.String("kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
		kubeContext   = fs.String("context", "", "kubeconfig context to use")
		candidates    = fs.Int("candidates", 5, "how many rejected volumes to list per claim")
		timeout       = fs.Duration("request-timeout", 30*time.Second, "timeout of the whole read from the cluster")
		showVersion   = fs.Bool("version", false, "print the version and the upstream release whose binder code it asks, and exit")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Explain why a PersistentVolumeClaim is not Bound (or not resized), with the binder's own matching code.

Usage:
  kubectl pvc-why NAME [-n NAMESPACE] [-o json]    one claim, in words, then the evidence
  kubectl pvc-why [-n NAMESPACE | -A] [-o json]    every claim there that is not Bound or is resizing
  kubectl pvc-why ... --from-file dump.yaml        the same, offline, from a support dump

Exit code: 0 when every claim asked about is Bound and not resizing, 1 when one is not, 2 on errors.
It only reads (list calls).

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return ExitOK
		}
		return ExitError
	}
	if *showVersion {
		fmt.Fprintf(stdout, "kubectl-pvc_why %s (binder code of k8s.io/kubernetes %s, commit %s)\n", version.Version, version.Upstream, version.GitCommit)
		return ExitOK
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "error: "+format+"\n", a...)
		return ExitError
	}
	if *output != "text" && *output != "json" {
		return fail("--output must be text or json, not %q", *output)
	}
	if fs.NArg() > 1 {
		return fail("one claim name at most, got %q", fs.Args())
	}
	name := fs.Arg(0)
	if name != "" && *allNamespaces {
		return fail("a claim name cannot be used with --all-namespaces")
	}

	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	clientConfig := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: *kubeContext})
	ns := *namespace
	if ns == "" && !*allNamespaces {
		ns = "default"
		if n, _, err := clientConfig.Namespace(); err == nil && n != "" {
			ns = n
		}
	}

	var snapshot *Snapshot
	if *fromFile != "" {
		in := os.Stdin
		if *fromFile != "-" {
			f, err := os.Open(*fromFile)
			if err != nil {
				return fail("--from-file: %v", err)
			}
			defer f.Close()
			in = f
		}
		s, err := LoadFromFile(in)
		if err != nil {
			return fail("--from-file %s: %v", *fromFile, err)
		}
		snapshot = s
	} else {
		restConfig, err := clientConfig.ClientConfig()
		if err != nil {
			return fail("kubeconfig: %v", err)
		}
		restConfig.UserAgent = "kubectl-pvc_why"
		client, err := kubernetes.NewForConfig(restConfig)
		if err != nil {
			return fail("%v", err)
		}
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		s, err := LoadFromCluster(ctx, client, Scope{Namespace: ns, AllNamespaces: *allNamespaces})
		if err != nil {
			return fail("%v", err)
		}
		snapshot = s
	}

	analyzer := NewAnalyzer(snapshot)
	analyzer.MaxCandidates = *candidates
	if name != "" {
		claim := analyzer.Claim(ns, name)
		if claim == nil {
			return fail("persistentvolumeclaim %q not found in namespace %q", name, ns)
		}
		report := analyzer.Explain(claim)
		var err error
		if *output == "json" {
			err = WriteJSON(stdout, report)
		} else {
			err = WriteText(stdout, report, snapshot.Now)
		}
		if err != nil {
			return fail("%v", err)
		}
		if report.OK {
			return ExitOK
		}
		return ExitNotReady
	}

	var reports []*Report
	for _, r := range analyzer.ExplainAll(true) {
		if *allNamespaces || r.Namespace == ns {
			reports = append(reports, r)
		}
	}
	var err error
	switch {
	case *output == "json":
		if reports == nil {
			reports = []*Report{}
		}
		err = WriteJSON(stdout, reports)
	case len(reports) == 0:
		where := fmt.Sprintf("in namespace %q", ns)
		if *allNamespaces {
			where = "in any namespace"
		}
		_, err = fmt.Fprintf(stdout, "every claim %s is Bound and none is resizing\n", where)
	default:
		err = WriteTable(stdout, reports)
	}
	if err != nil {
		return fail("%v", err)
	}
	if len(reports) > 0 {
		return ExitNotReady
	}
	return ExitOK
}
