package options

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app/config"
)

// StandbyOptions are the flags of what a replica does while another holds the Lease, bound to the
// configuration they apply.
type StandbyOptions struct {
	*config.Standby
}

// NewStandbyOptions returns the defaults: a cold standby, as KCM's.
func NewStandbyOptions() *StandbyOptions {
	return &StandbyOptions{Standby: &config.Standby{}}
}

// AddFlags adds the flags to fs (the "generic" section, where KCM puts its --leader-elect-* flags).
func (o *StandbyOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Warm, "leader-elect-warm-standby", o.Warm,
		"Start the binder's informers while waiting for the Lease, so that a replica taking over binds without first listing "+
			"every volume and claim (28-39 s at 100 000 pairs, docs/operators/scale.md). A standby then holds the same caches "+
			"as the leader (memory: the leader's steady RSS) and receives every change of volumes, claims, pods and nodes; it "+
			"writes nothing until it holds the Lease. Off: informers start when the Lease is acquired, as in kube-controller-manager.")
}

// Validate reports every invalid flag.
func (o *StandbyOptions) Validate(leaderElect bool) []error {
	if o.Warm && !leaderElect {
		return []error{fmt.Errorf("--leader-elect-warm-standby needs --leader-elect: without leader election there is no standby, every replica binds")}
	}
	return nil
}

// ApplyTo copies the configuration into cfg.
func (o *StandbyOptions) ApplyTo(cfg *config.Standby) error {
	*cfg = *o.Standby
	return nil
}
