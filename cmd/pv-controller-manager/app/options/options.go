// Package options declares the command-line flags of pv-controller-manager. Every flag shared with
// kube-controller-manager comes from KCM's own option structs, so names, meanings and defaults stay
// identical; deviations are listed in DeviationsFromKCM and tested. Our own flags are option groups
// in the shape of KCM's (AddFlags, Validate, ApplyTo; one file each): binder.go for the binder's
// new settings, upstreamguard.go for the guard against KCM's binder, shadow.go for shadow mode,
// standby.go for what a replica does without the Lease.
package options

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientset "k8s.io/client-go/kubernetes"
	clientgokubescheme "k8s.io/client-go/kubernetes/scheme"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	cliflag "k8s.io/component-base/cli/flag"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/metrics"
	cmoptions "k8s.io/controller-manager/options"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
	netutils "k8s.io/utils/net"

	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app/config"
	"github.com/fastpv/pv-controller-manager/pkg/kcmargs"
)

const (
	// ComponentName is the binary's name, its user agent and its event source.
	ComponentName = "pv-controller-manager"
	// BinderControllerName is the only controller this binary runs; the name is KCM's.
	BinderControllerName = kcmargs.BinderController
	// BinderControllerAlias is KCM's alias for it.
	BinderControllerAlias = kcmargs.BinderControllerAlias
	// BinderUserAgent is the user agent of the controller's client, as in KCM.
	BinderUserAgent = "persistent-volume-binder"

	// DefaultSecurePort differs from KCM's 10257: both run with hostNetwork on the same node.
	DefaultSecurePort = 10267
	// DefaultLeaseName is our own Lease; KCM's is kube-controller-manager.
	DefaultLeaseName = "pv-controller-manager"

	kcmLeaseName = "kube-controller-manager"
)

// KnownControllers lists the controllers --controllers accepts (besides "*" and aliases).
func KnownControllers() []string { return []string{BinderControllerName} }

// ControllerAliases maps KCM's alias to the canonical name.
func ControllerAliases() map[string]string {
	return map[string]string{BinderControllerAlias: BinderControllerName}
}

// DeviationsFromKCM names the shared flags whose default differs from kube-controller-manager's, and why.
var DeviationsFromKCM = map[string]string{
	"secure-port":                "runs beside KCM on the same host network; KCM holds 10257",
	"leader-elect-resource-name": "our own Lease, so we never contend with KCM for kube-controller-manager",
}

// PVControllerManagerOptions holds every flag of the binary.
type PVControllerManagerOptions struct {
	Generic                          *cmoptions.GenericControllerManagerConfigurationOptions
	PersistentVolumeBinderController *kcmoptions.PersistentVolumeBinderControllerOptions
	SecureServing                    *apiserveroptions.SecureServingOptions
	Authentication                   *apiserveroptions.DelegatingAuthenticationOptions
	Authorization                    *apiserveroptions.DelegatingAuthorizationOptions
	Metrics                          *metrics.Options
	Logs                             *logs.Options
	ComponentGlobalsRegistry         basecompatibility.ComponentGlobalsRegistry

	// Binder holds the binder's flags that KCM does not have (binder.go).
	Binder *BinderOptions
	// UpstreamBinderGuard is new here: hold writes while KCM still runs its own binder (upstreamguard.go).
	UpstreamBinderGuard *UpstreamBinderGuardOptions
	// Shadow is new here: run beside KCM's binder, dry-run every write, compare (shadow.go).
	Shadow *ShadowOptions
	// Standby is new here: a warm standby (standby.go).
	Standby *StandbyOptions

	Master                    string
	ControllerShutdownTimeout time.Duration
	ShowVersion               bool
}

// NewPVControllerManagerOptions returns options with KCM's defaults, except DeviationsFromKCM.
func NewPVControllerManagerOptions() (*PVControllerManagerOptions, error) {
	componentConfig, err := kcmoptions.NewDefaultComponentConfig()
	if err != nil {
		return nil, err
	}

	registry := compatibility.DefaultComponentGlobalsRegistry
	if registry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent) == nil {
		utilruntime.Must(registry.Register(basecompatibility.DefaultKubeComponent,
			compatibility.DefaultBuildEffectiveVersion(), utilfeature.DefaultMutableFeatureGate))
	}

	s := &PVControllerManagerOptions{
		Generic: cmoptions.NewGenericControllerManagerConfigurationOptions(&componentConfig.Generic),
		PersistentVolumeBinderController: &kcmoptions.PersistentVolumeBinderControllerOptions{
			PersistentVolumeBinderControllerConfiguration: &componentConfig.PersistentVolumeBinderController,
		},
		SecureServing:             apiserveroptions.NewSecureServingOptions(),
		Authentication:            apiserveroptions.NewDelegatingAuthenticationOptions(),
		Authorization:             apiserveroptions.NewDelegatingAuthorizationOptions(),
		Metrics:                   metrics.NewOptions(),
		Logs:                      logs.NewOptions(),
		ComponentGlobalsRegistry:  registry,
		ControllerShutdownTimeout: 10 * time.Second,
		Binder:                    NewBinderOptions(),
		UpstreamBinderGuard:       NewUpstreamBinderGuardOptions(),
		Shadow:                    NewShadowOptions(),
		Standby:                   NewStandbyOptions(),
	}
	// As KCM: delegated authn/authz is optional (in-cluster config is used when present).
	s.Authentication.RemoteKubeConfigFileOptional = true
	s.Authorization.RemoteKubeConfigFileOptional = true
	s.SecureServing.ServerCert.CertDirectory = ""
	s.SecureServing.ServerCert.PairName = ComponentName
	s.SecureServing.BindPort = DefaultSecurePort
	s.Generic.LeaderElection.ResourceName = DefaultLeaseName
	s.Generic.LeaderElection.ResourceNamespace = "kube-system"
	return s, nil
}

// Flags returns the flag sets by section, as KCM does.
func (s *PVControllerManagerOptions) Flags() cliflag.NamedFlagSets {
	fss := cliflag.NamedFlagSets{}
	s.Generic.AddFlags(&fss, KnownControllers(), nil, ControllerAliases())
	// Leader migration moves KCM controllers to the cloud-controller-manager; it has no meaning here,
	// and a flag that is accepted but ignored would mislead.
	delete(fss.FlagSets, "leader-migration")
	fss.Order = slices.DeleteFunc(fss.Order, func(n string) bool { return n == "leader-migration" })

	s.SecureServing.AddFlags(fss.FlagSet("secure serving"))
	s.Authentication.AddFlags(fss.FlagSet("authentication"))
	s.Authorization.AddFlags(fss.FlagSet("authorization"))
	binderFlags := fss.FlagSet(BinderControllerName)
	s.PersistentVolumeBinderController.AddFlags(binderFlags)
	s.Binder.AddFlags(binderFlags)
	s.UpstreamBinderGuard.AddFlags(fss.FlagSet("upstream binder guard"))
	s.Shadow.AddFlags(fss.FlagSet("shadow"))
	s.Standby.AddFlags(fss.FlagSet("generic")) // beside KCM's --leader-elect-* flags
	s.Metrics.AddFlags(fss.FlagSet("metrics"))
	logsapi.AddFlags(s.Logs, fss.FlagSet("logs"))

	fs := fss.FlagSet("misc")
	fs.StringVar(&s.Master, "master", s.Master, "The address of the Kubernetes API server (overrides any value in kubeconfig).")
	fs.StringVar(&s.Generic.ClientConnection.Kubeconfig, "kubeconfig", s.Generic.ClientConnection.Kubeconfig, "Path to kubeconfig file with authorization and master location information (the master location can be overridden by the master flag).")
	fs.BoolVar(&s.ShowVersion, "version", false, "Print version information and quit.")

	fss.FlagSet("generic").DurationVar(&s.ControllerShutdownTimeout, "controller-shutdown-timeout", s.ControllerShutdownTimeout,
		"Time to wait for the controller to finish in-flight syncs before releasing the Lease and exiting.")
	s.ComponentGlobalsRegistry.AddFlags(fss.FlagSet("generic"))
	return fss
}

// Validate reports every invalid flag at once, each error naming its flag.
func (s *PVControllerManagerOptions) Validate() error {
	var errs []error
	if err := s.ComponentGlobalsRegistry.SetFallback(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, s.ComponentGlobalsRegistry.Validate()...)
	errs = append(errs, s.validateControllers()...)
	errs = append(errs, s.Generic.Debugging.Validate()...)
	if le := s.Generic.LeaderElection; le.LeaderElect {
		if le.ResourceLock != "leases" {
			errs = append(errs, fmt.Errorf("--leader-elect-resource-lock: must be \"leases\", got %q", le.ResourceLock))
		}
		if le.ResourceName == kcmLeaseName {
			errs = append(errs, fmt.Errorf("--leader-elect-resource-name: %q is kube-controller-manager's Lease; use our own (default %q)", le.ResourceName, DefaultLeaseName))
		}
		if le.LeaseDuration.Duration <= le.RenewDeadline.Duration {
			errs = append(errs, fmt.Errorf("--leader-elect-lease-duration (%s) must be greater than --leader-elect-renew-deadline (%s)", le.LeaseDuration.Duration, le.RenewDeadline.Duration))
		}
		if le.RetryPeriod.Duration <= 0 {
			errs = append(errs, fmt.Errorf("--leader-elect-retry-period must be positive, got %s", le.RetryPeriod.Duration))
		}
	}
	if s.ControllerShutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("--controller-shutdown-timeout must not be negative, got %s", s.ControllerShutdownTimeout))
	}
	errs = append(errs, s.validateBinder()...)
	errs = append(errs, s.UpstreamBinderGuard.Validate()...)
	errs = append(errs, s.Shadow.Validate()...)
	errs = append(errs, s.Standby.Validate(s.Generic.LeaderElection.LeaderElect)...)
	errs = append(errs, s.SecureServing.Validate()...)
	errs = append(errs, s.Authentication.Validate()...)
	errs = append(errs, s.Authorization.Validate()...)
	errs = append(errs, s.Metrics.Validate()...)
	return utilerrors.NewAggregate(errs)
}

// validateControllers accepts "*", the binder's name and its alias (optionally "-"-prefixed), and
// fails when the list would leave this binary with nothing to run. Whether the binder is enabled is
// decided by KCM's own rule (kcmargs.BinderEnabledIn: the first explicit entry wins over "*").
func (s *PVControllerManagerOptions) validateControllers() []error {
	knownText := fmt.Sprintf("%s (alias %s)", BinderControllerName, BinderControllerAlias)
	var errs []error
	for _, entry := range s.Generic.Controllers {
		if bare := strings.TrimPrefix(kcmargs.Canonical(entry), "-"); entry != "*" && bare != BinderControllerName {
			errs = append(errs, fmt.Errorf("--controllers: %q is not a known controller; this binary runs only %s", strings.TrimPrefix(entry, "-"), knownText))
		}
	}
	if len(errs) == 0 && !kcmargs.BinderEnabledIn(s.Generic.Controllers) {
		errs = append(errs, fmt.Errorf("--controllers=%s disables %s, the only controller this binary runs; enable it (e.g. --controllers=*) or do not start pv-controller-manager",
			strings.Join(s.Generic.Controllers, ","), knownText))
	}
	return errs
}

func (s *PVControllerManagerOptions) validateBinder() []error {
	var errs []error
	cfg := s.PersistentVolumeBinderController.PersistentVolumeBinderControllerConfiguration
	if cfg.PVClaimBinderSyncPeriod.Duration <= 0 {
		errs = append(errs, fmt.Errorf("--pvclaimbinder-sync-period must be positive, got %s", cfg.PVClaimBinderSyncPeriod.Duration))
	}
	errs = append(errs, s.Binder.Validate(cfg.PVClaimBinderSyncPeriod.Duration)...)
	recycler := cfg.VolumeConfiguration.PersistentVolumeRecyclerConfiguration
	for flag, value := range map[string]int32{
		"--pv-recycler-minimum-timeout-nfs":        recycler.MinimumTimeoutNFS,
		"--pv-recycler-increment-timeout-nfs":      recycler.IncrementTimeoutNFS,
		"--pv-recycler-minimum-timeout-hostpath":   recycler.MinimumTimeoutHostPath,
		"--pv-recycler-timeout-increment-hostpath": recycler.IncrementTimeoutHostPath,
	} {
		if value < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %d", flag, value))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

// Config validates the options and builds the runtime configuration (clients, serving, auth).
func (s *PVControllerManagerOptions) Config(ctx context.Context) (*config.Config, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := s.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("error creating self-signed certificates: %w", err)
	}

	kubeconfig, err := clientcmd.BuildConfigFromFlags(s.Master, s.Generic.ClientConnection.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig/--master: %w", err)
	}
	kubeconfig.DisableCompression = true
	kubeconfig.ContentConfig.AcceptContentTypes = s.Generic.ClientConnection.AcceptContentTypes
	kubeconfig.ContentConfig.ContentType = s.Generic.ClientConnection.ContentType
	kubeconfig.QPS = s.Generic.ClientConnection.QPS
	kubeconfig.Burst = int(s.Generic.ClientConnection.Burst)

	client, err := clientset.NewForConfig(restclient.AddUserAgent(kubeconfig, ComponentName))
	if err != nil {
		return nil, err
	}
	eventBroadcaster := record.NewBroadcaster(record.WithContext(ctx))
	eventRecorder := eventBroadcaster.NewRecorder(clientgokubescheme.Scheme, v1.EventSource{Component: ComponentName})

	c := &config.Config{
		Kubeconfig: kubeconfig,
		LoadKubeconfig: func() (*restclient.Config, error) {
			return clientcmd.BuildConfigFromFlags(s.Master, s.Generic.ClientConnection.Kubeconfig)
		},
		Client:                    client,
		EventBroadcaster:          eventBroadcaster,
		EventRecorder:             eventRecorder,
		ControllerShutdownTimeout: s.ControllerShutdownTimeout,
		ComponentGlobalsRegistry:  s.ComponentGlobalsRegistry,
	}
	if err := s.ApplyTo(c); err != nil {
		return nil, err
	}
	applyMetricsFeatureGates()
	s.Metrics.Apply()
	return c, nil
}

// ApplyTo copies the options into c (controller names canonicalised, serving and auth set up).
func (s *PVControllerManagerOptions) ApplyTo(c *config.Config) error {
	if err := s.ComponentGlobalsRegistry.SetFallback(); err != nil {
		return err
	}
	if err := s.Generic.ApplyTo(&c.Generic, KnownControllers(), nil, ControllerAliases()); err != nil {
		return err
	}
	if err := s.PersistentVolumeBinderController.ApplyTo(&c.PersistentVolumeBinderController); err != nil {
		return err
	}
	if err := s.Binder.ApplyTo(&c.Binder); err != nil {
		return err
	}
	if err := s.UpstreamBinderGuard.ApplyTo(&c.UpstreamBinderGuard); err != nil {
		return err
	}
	if err := s.Shadow.ApplyTo(&c.Shadow); err != nil {
		return err
	}
	if err := s.Standby.ApplyTo(&c.Standby); err != nil {
		return err
	}
	if c.Shadow.Enabled {
		// A shadow writes nothing, so KCM's binder must keep running: the guard reports it only.
		c.UpstreamBinderGuard.Allow = true
		if c.Generic.LeaderElection.ResourceName == DefaultLeaseName {
			c.Generic.LeaderElection.ResourceName = DefaultShadowLeaseName
		}
	}
	if err := s.SecureServing.ApplyTo(&c.SecureServing); err != nil {
		return err
	}
	if s.SecureServing.BindPort != 0 || s.SecureServing.Listener != nil {
		if err := s.Authentication.ApplyTo(&c.Authentication, c.SecureServing, nil); err != nil {
			return err
		}
		if err := s.Authorization.ApplyTo(&c.Authorization); err != nil {
			return err
		}
	}
	return nil
}
