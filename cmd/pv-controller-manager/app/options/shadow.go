package options

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app/config"
)

// DefaultShadowLeaseName is the Lease of a binder in shadow mode unless --leader-elect-resource-name
// names another: a shadow and a binding pv-controller-manager never compete for one Lease.
const DefaultShadowLeaseName = DefaultLeaseName + "-shadow"

// ShadowOptions are the flags of shadow mode (pkg/shadow), bound to the configuration they apply.
type ShadowOptions struct {
	*config.Shadow
}

// NewShadowOptions returns the defaults.
func NewShadowOptions() *ShadowOptions {
	return &ShadowOptions{Shadow: &config.Shadow{Window: 2 * time.Minute}}
}

// AddFlags adds the flags to fs (the "shadow" section).
func (o *ShadowOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "shadow", o.Enabled,
		"Run beside kube-controller-manager's PersistentVolume binder without changing anything: every write of the binder is sent "+
			"as a dry run (dryRun=All), and what it would have decided is compared, claim by claim, with what KCM's binder did "+
			"(pv_controller_shadow_decisions_total, pv_controller_shadow_lead_seconds, ShadowDisagreement events; kubectl pvc-why --shadow). "+
			"The upstream binder guard reports KCM's binder but does not hold. The Lease defaults to "+DefaultShadowLeaseName+".")
	fs.DurationVar(&o.Window, "shadow-window", o.Window,
		"In shadow mode, a claim ours would have bound that KCM's binder has not bound this long after counts as only-ours.")
}

// Validate reports every invalid flag.
func (o *ShadowOptions) Validate() []error {
	if o.Window <= 0 {
		return []error{fmt.Errorf("--shadow-window must be positive, got %s", o.Window)}
	}
	return nil
}

// ApplyTo copies the configuration into cfg.
func (o *ShadowOptions) ApplyTo(cfg *config.Shadow) error {
	*cfg = *o.Shadow
	return nil
}
