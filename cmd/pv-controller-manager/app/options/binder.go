package options

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app/config"
)

// DefaultFullResyncPeriod is the default of --pvclaimbinder-full-resync-period.
const DefaultFullResyncPeriod = 5 * time.Minute

// DefaultConcurrentSyncs is the default of --pvclaimbinder-concurrent-syncs (docs/maintainers/design/parallel-workers.md).
const DefaultConcurrentSyncs = 32

// DefaultReservedVolumeGracePeriod is the default of --pvclaimbinder-reserved-volume-grace-period
// (docs/maintainers/design/writes-per-bind.md).
const DefaultReservedVolumeGracePeriod = 5 * time.Second

// DefaultUnclaimedVolumeGracePeriod is the default of --pvclaimbinder-unclaimed-volume-grace-period
// (docs/maintainers/design/writes-per-bind.md): a claim created with its volume by a client is seen
// within milliseconds; creationTimestamp has whole seconds, so the volume waits 1-2 s.
const DefaultUnclaimedVolumeGracePeriod = 2 * time.Second

// BinderOptions are the binder's flags that KCM does not have (the patch series adds them); KCM's
// own binder flags are kcmoptions.PersistentVolumeBinderControllerOptions. As KCM's option
// groups, it binds its flags to the configuration it applies.
type BinderOptions struct {
	*config.Binder

	// fullResyncFlag tells whether --pvclaimbinder-full-resync-period was given (see Validate).
	fullResyncFlag *pflag.Flag
}

// NewBinderOptions returns the defaults.
func NewBinderOptions() *BinderOptions {
	return &BinderOptions{Binder: &config.Binder{
		FullResyncPeriod:           DefaultFullResyncPeriod,
		ConcurrentSyncs:            DefaultConcurrentSyncs,
		ReservedVolumeGracePeriod:  DefaultReservedVolumeGracePeriod,
		UnclaimedVolumeGracePeriod: DefaultUnclaimedVolumeGracePeriod,
	}}
}

// AddFlags adds the flags to fs (KCM's persistentvolume-binder-controller section).
func (o *BinderOptions) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.FullResyncPeriod, "pvclaimbinder-full-resync-period", o.FullResyncPeriod,
		"The period for re-queueing every persistent volume and claim, bound or not, as a safety net for missed events. "+
			"--pvclaimbinder-sync-period re-queues only those not yet bound. 0 disables the full resync. "+
			"Unset, it is 5m or the sync period if that is longer.")
	o.fullResyncFlag = fs.Lookup("pvclaimbinder-full-resync-period")
	fs.IntVar(&o.ConcurrentSyncs, "pvclaimbinder-concurrent-syncs", o.ConcurrentSyncs,
		"The number of claim workers and of volume workers. All work on one volume is serialised, and claims without "+
			"spec.volumeName are matched one at a time, so no volume is bound twice. 1 behaves like the upstream controller.")
	fs.DurationVar(&o.ReservedVolumeGracePeriod, "pvclaimbinder-reserved-volume-grace-period", o.ReservedVolumeGracePeriod,
		"How long a new persistent volume whose spec.claimRef reserves a claim that does not exist yet stays Pending before it is marked "+
			"Available, so that the claim, if it comes meanwhile, binds it with one write less. Nothing else can bind such a volume. "+
			"0 marks it Available at once, as the upstream controller.")
	fs.DurationVar(&o.UnclaimedVolumeGracePeriod, "pvclaimbinder-unclaimed-volume-grace-period", o.UnclaimedVolumeGracePeriod,
		"How long after its creationTimestamp (whole seconds) a new persistent volume without spec.claimRef that no waiting claim fits "+
			"stays Pending before it is marked Available, so that a claim created with it binds it with one write less. Not for storage "+
			"classes with volumeBindingMode WaitForFirstConsumer. 0 marks it Available at once, as the upstream controller.")
}

// Validate checks the flags against KCM's --pvclaimbinder-sync-period. An operator who only
// lengthens the sync period means "resync less", not "full resync more often than the sync": an
// unset full resync period follows the sync period; an explicit shorter one is an error.
func (o *BinderOptions) Validate(syncPeriod time.Duration) []error {
	var errs []error
	if (o.fullResyncFlag == nil || !o.fullResyncFlag.Changed) && o.FullResyncPeriod > 0 && o.FullResyncPeriod < syncPeriod {
		o.FullResyncPeriod = syncPeriod
	}
	switch {
	case o.FullResyncPeriod < 0:
		errs = append(errs, fmt.Errorf("--pvclaimbinder-full-resync-period must be 0 (disabled) or positive, got %s", o.FullResyncPeriod))
	case o.FullResyncPeriod > 0 && o.FullResyncPeriod < syncPeriod:
		errs = append(errs, fmt.Errorf("--pvclaimbinder-full-resync-period (%s) must be 0 (disabled) or at least --pvclaimbinder-sync-period (%s)", o.FullResyncPeriod, syncPeriod))
	}
	if o.ReservedVolumeGracePeriod < 0 {
		errs = append(errs, fmt.Errorf("--pvclaimbinder-reserved-volume-grace-period must be 0 (off) or positive, got %s", o.ReservedVolumeGracePeriod))
	}
	if o.UnclaimedVolumeGracePeriod < 0 {
		errs = append(errs, fmt.Errorf("--pvclaimbinder-unclaimed-volume-grace-period must be 0 (off) or positive, got %s", o.UnclaimedVolumeGracePeriod))
	}
	if o.ConcurrentSyncs < 1 {
		errs = append(errs, fmt.Errorf("--pvclaimbinder-concurrent-syncs must be at least 1, got %d", o.ConcurrentSyncs))
	}
	return errs
}

// ApplyTo copies the configuration into cfg.
func (o *BinderOptions) ApplyTo(cfg *config.Binder) error {
	*cfg = *o.Binder
	return nil
}
