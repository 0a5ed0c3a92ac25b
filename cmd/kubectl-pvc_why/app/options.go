package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fastpv/pv-controller-manager/pkg/explain"
	"github.com/fastpv/pv-controller-manager/pkg/shadow"
)

// Exit codes of the plugin.
const (
	ExitOK       = 0 // every claim asked about is Bound and not resizing
	ExitNotReady = 1 // at least one is not
	ExitError    = 2 // bad usage, unreadable input, claim not found, API error
)

// Options are the plugin's flags and arguments, then (Complete) what they resolve to.
type Options struct {
	Namespace      string
	AllNamespaces  bool
	Output         string
	FromFile       string
	Kubeconfig     string
	Context        string
	Candidates     int
	RequestTimeout time.Duration
	ShowVersion    bool
	// Shadow reports what pv-controller-manager in shadow mode recorded instead of explaining claims.
	Shadow bool

	// Name is the claim asked about ("" for every claim in scope); set by Complete.
	Name string
	// clientConfig is the kubeconfig the flags select; set by Complete.
	clientConfig clientcmd.ClientConfig

	Out, ErrOut io.Writer
}

// NewOptions returns the defaults, writing to out and errOut.
func NewOptions(out, errOut io.Writer) *Options {
	return &Options{Output: "text", Candidates: 5, RequestTimeout: 30 * time.Second, Out: out, ErrOut: errOut}
}

// AddFlags binds the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.Namespace, "namespace", "n", o.Namespace, "namespace of the claim (default: the kubeconfig context's)")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "every claim of every namespace that is not Bound (or is resizing)")
	fs.StringVarP(&o.Output, "output", "o", o.Output, "text or json")
	fs.StringVar(&o.FromFile, "from-file", o.FromFile, "read objects from `kubectl get pvc,pv,sc,pods,events,nodes,leases -A -o yaml` output (- for stdin) instead of a cluster")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&o.Context, "context", o.Context, "kubeconfig context to use")
	fs.IntVar(&o.Candidates, "candidates", o.Candidates, "how many rejected volumes to list per claim")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout, "timeout of the whole read from the cluster")
	fs.BoolVar(&o.Shadow, "shadow", o.Shadow, "report the comparisons of pv-controller-manager --shadow (its events): per outcome for the namespace, -A or one claim, and the claims worth reading; exit 1 if any disagreement (docs/operators/shadow.md)")
	fs.BoolVar(&o.ShowVersion, "version", o.ShowVersion, "print the version and the upstream release whose binder code it asks, and exit")
}

// Complete takes the arguments and resolves the kubeconfig and the namespace.
func (o *Options) Complete(args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("one claim name at most, got %q", args)
	}
	if len(args) == 1 {
		o.Name = args[0]
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	o.clientConfig = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	if o.Namespace == "" && !o.AllNamespaces {
		o.Namespace = "default"
		if n, _, err := o.clientConfig.Namespace(); err == nil && n != "" {
			o.Namespace = n
		}
	}
	return nil
}

// Validate rejects combinations that mean nothing.
func (o *Options) Validate() error {
	if o.Output != "text" && o.Output != "json" {
		return fmt.Errorf("--output must be text or json, not %q", o.Output)
	}
	if o.Name != "" && o.AllNamespaces {
		return errors.New("a claim name cannot be used with --all-namespaces")
	}
	if o.Candidates < 0 {
		return fmt.Errorf("--candidates must not be negative, got %d", o.Candidates)
	}
	return nil
}

// Run reads the objects, explains the claims asked about and writes the answer. It returns the
// exit code for the claims (ExitOK or ExitNotReady), or an error.
func (o *Options) Run(ctx context.Context) (int, error) {
	snapshot, err := o.snapshot(ctx)
	if err != nil {
		return ExitError, err
	}
	if o.Shadow {
		return o.runShadow(snapshot)
	}
	analyzer := explain.NewAnalyzer(snapshot)
	analyzer.MaxCandidates = o.Candidates
	if o.Name != "" {
		claim := analyzer.Claim(o.Namespace, o.Name)
		if claim == nil {
			return ExitError, fmt.Errorf("persistentvolumeclaim %q not found in namespace %q", o.Name, o.Namespace)
		}
		report := analyzer.Explain(claim)
		if o.Output == "json" {
			err = explain.WriteJSON(o.Out, report)
		} else {
			err = explain.WriteText(o.Out, report, snapshot.Now)
		}
		if err != nil {
			return ExitError, err
		}
		if report.OK {
			return ExitOK, nil
		}
		return ExitNotReady, nil
	}

	var reports []*explain.Report
	for _, r := range analyzer.ExplainAll(true) {
		if o.AllNamespaces || r.Namespace == o.Namespace {
			reports = append(reports, r)
		}
	}
	switch {
	case o.Output == "json":
		if reports == nil {
			reports = []*explain.Report{}
		}
		err = explain.WriteJSON(o.Out, reports)
	case len(reports) == 0:
		where := fmt.Sprintf("in namespace %q", o.Namespace)
		if o.AllNamespaces {
			where = "in any namespace"
		}
		_, err = fmt.Fprintf(o.Out, "every claim %s is Bound and none is resizing\n", where)
	default:
		err = explain.WriteTable(o.Out, reports)
	}
	if err != nil {
		return ExitError, err
	}
	if len(reports) > 0 {
		return ExitNotReady, nil
	}
	return ExitOK, nil
}

// snapshot reads the objects from --from-file or from the cluster (list calls only).
func (o *Options) snapshot(ctx context.Context) (*explain.Snapshot, error) {
	if o.FromFile != "" {
		in := os.Stdin
		if o.FromFile != "-" {
			f, err := os.Open(o.FromFile)
			if err != nil {
				return nil, fmt.Errorf("--from-file: %w", err)
			}
			defer f.Close()
			in = f
		}
		s, err := explain.LoadFromFile(in)
		if err != nil {
			return nil, fmt.Errorf("--from-file %s: %w", o.FromFile, err)
		}
		return s, nil
	}
	restConfig, err := o.clientConfig.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	restConfig.UserAgent = "kubectl-pvc_why"
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.RequestTimeout)
	defer cancel()
	return explain.LoadFromCluster(ctx, client, explain.Scope{Namespace: o.Namespace, AllNamespaces: o.AllNamespaces})
}

// runShadow reports the shadow's comparisons in scope; ExitNotReady when one is a disagreement.
func (o *Options) runShadow(snapshot *explain.Snapshot) (int, error) {
	namespace := o.Namespace
	if o.AllNamespaces {
		namespace = ""
	}
	summary := explain.SummarizeShadow(explain.ShadowRecords(snapshot, namespace, o.Name))
	var err error
	if o.Output == "json" {
		err = explain.WriteShadowJSON(o.Out, summary)
	} else {
		err = explain.WriteShadowText(o.Out, summary)
	}
	if err != nil {
		return ExitError, err
	}
	if summary.Outcomes[string(shadow.Disagree)] > 0 {
		return ExitNotReady, nil
	}
	return ExitOK, nil
}
