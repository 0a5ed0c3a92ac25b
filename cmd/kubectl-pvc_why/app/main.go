package app

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/fastpv/pv-controller-manager/pkg/version"
)

const usage = `Explain why a PersistentVolumeClaim is not Bound (or not resized), with the binder's own matching code.

Usage:
  kubectl pvc-why NAME [-n NAMESPACE] [-o json]    one claim, in words, then the evidence
  kubectl pvc-why [-n NAMESPACE | -A] [-o json]    every claim there that is not Bound or is resizing
  kubectl pvc-why ... --from-file dump.yaml        the same, offline, from a support dump

Exit code: 0 when every claim asked about is Bound and not resizing, 1 when one is not, 2 on errors.
It only reads (list calls).

Flags:
`

// Main runs `kubectl pvc-why` with args (without the program name) and returns its exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o := NewOptions(stdout, stderr)
	fs := pflag.NewFlagSet("kubectl pvc-why", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	o.AddFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return ExitOK
		}
		return ExitError
	}
	if o.ShowVersion {
		fmt.Fprintf(stdout, "kubectl-pvc_why %s (binder code of k8s.io/kubernetes %s, commit %s)\n", version.Version, version.Upstream, version.GitCommit)
		return ExitOK
	}
	code, err := func() (int, error) {
		if err := o.Complete(fs.Args()); err != nil {
			return ExitError, err
		}
		if err := o.Validate(); err != nil {
			return ExitError, err
		}
		return o.Run(ctx)
	}()
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
	}
	return code
}
