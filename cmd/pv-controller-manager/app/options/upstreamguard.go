package options

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app/config"
	"github.com/fastpv/pv-controller-manager/pkg/upstreamguard"
)

// UpstreamBinderGuardOptions are the flags of the check for a kube-controller-manager that still
// runs its own PersistentVolume binder (pkg/upstreamguard), bound to the configuration they apply.
type UpstreamBinderGuardOptions struct {
	*config.UpstreamBinderGuard
}

// NewUpstreamBinderGuardOptions returns the defaults.
func NewUpstreamBinderGuardOptions() *UpstreamBinderGuardOptions {
	return &UpstreamBinderGuardOptions{UpstreamBinderGuard: &config.UpstreamBinderGuard{
		PodNamespace: upstreamguard.DefaultNamespace,
		PodSelector:  upstreamguard.DefaultSelector,
		CheckPeriod:  time.Minute,
		LeaseName:    upstreamguard.DefaultLeaseName,
	}}
}

// AddFlags adds the flags to fs (the "upstream binder guard" section).
func (o *UpstreamBinderGuardOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Allow, "allow-upstream-binder", o.Allow,
		"Bind even while a kube-controller-manager pod runs its own PersistentVolume binder. Off by default: we then hold our writes "+
			"(reporting pv_controller_upstream_binder_active and a Warning event on that pod) until KCM runs with -"+BinderControllerName+".")
	fs.StringVar(&o.PodNamespace, "upstream-binder-pod-namespace", o.PodNamespace,
		"Namespace of the kube-controller-manager (mirror) pods to check.")
	fs.StringVar(&o.PodSelector, "upstream-binder-pod-selector", o.PodSelector,
		"Label selector of the kube-controller-manager (mirror) pods to check; kubeadm labels them component=kube-controller-manager.")
	fs.DurationVar(&o.CheckPeriod, "upstream-binder-check-period", o.CheckPeriod,
		"How often the cached kube-controller-manager pods are checked again, besides on every change of them.")
	fs.StringVar(&o.LeaseName, "upstream-binder-lease", o.LeaseName,
		"kube-controller-manager's leader-election Lease (its --leader-elect-resource-name) in --upstream-binder-pod-namespace. While a KCM holds it, "+
			"only that KCM's pod counts: standbys with the binder enabled do not hold our writes (a rollout node by node). Empty: every KCM pod counts.")
}

// Validate reports every invalid flag, each error naming its flag.
func (o *UpstreamBinderGuardOptions) Validate() []error {
	var errs []error
	if _, err := o.Selector(); err != nil {
		errs = append(errs, fmt.Errorf("--upstream-binder-pod-selector: %w", err))
	}
	if o.PodNamespace == "" {
		errs = append(errs, fmt.Errorf("--upstream-binder-pod-namespace must not be empty"))
	}
	if o.CheckPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--upstream-binder-check-period must be positive, got %s", o.CheckPeriod))
	}
	return errs
}

// ApplyTo copies the configuration into cfg.
func (o *UpstreamBinderGuardOptions) ApplyTo(cfg *config.UpstreamBinderGuard) error {
	if _, err := o.Selector(); err != nil {
		return fmt.Errorf("--upstream-binder-pod-selector: %w", err)
	}
	*cfg = *o.UpstreamBinderGuard
	return nil
}
