package options

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app/config"
	"github.com/fastpv/pv-controller-manager/pkg/writepacer"
)

// WritePacingOptions are the flags of the binder's write pacing (pkg/writepacer), bound to the
// configuration they apply.
type WritePacingOptions struct {
	*config.WritePacing
}

// NewWritePacingOptions returns the defaults: pacing off (see docs/operators/operations.md, "Churn
// beside KCM", for what it was measured to do).
func NewWritePacingOptions() *WritePacingOptions {
	return &WritePacingOptions{WritePacing: &config.WritePacing{
		MaxWritesInFlight: 64,
		LatencyTolerance:  writepacer.DefaultTolerance,
	}}
}

// AddFlags adds the flags to fs (the binder's section).
func (o *WritePacingOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Adaptive, "pvclaimbinder-adaptive-writes", o.Adaptive,
		"Bound the binder's API writes in flight by the apiserver's latency, so that kube-controller-manager's other controllers "+
			"(pvc-protection writes one at a time) do not wait behind a burst of binds: the limit grows while writes return within "+
			"--pvclaimbinder-write-latency-tolerance times the least recent latency and shrinks when they take longer. Reads are not limited.")
	fs.IntVar(&o.MaxWritesInFlight, "pvclaimbinder-max-writes-in-flight", o.MaxWritesInFlight,
		"With --pvclaimbinder-adaptive-writes, the most writes the binder keeps in flight (and where the limit starts).")
	fs.Float64Var(&o.LatencyTolerance, "pvclaimbinder-write-latency-tolerance", o.LatencyTolerance,
		"With --pvclaimbinder-adaptive-writes, how many times its recent least latency a write may take before the binder sends fewer at once.")
}

// Validate reports every invalid flag.
func (o *WritePacingOptions) Validate() []error {
	var errs []error
	if o.MaxWritesInFlight < 1 {
		errs = append(errs, fmt.Errorf("--pvclaimbinder-max-writes-in-flight must be at least 1, got %d", o.MaxWritesInFlight))
	}
	if o.LatencyTolerance < 1 {
		errs = append(errs, fmt.Errorf("--pvclaimbinder-write-latency-tolerance must be at least 1, got %g", o.LatencyTolerance))
	}
	return errs
}

// ApplyTo copies the configuration into cfg.
func (o *WritePacingOptions) ApplyTo(cfg *config.WritePacing) error {
	*cfg = *o.WritePacing
	return nil
}
