package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apiserver/pkg/server/healthz"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	v1core "k8s.io/client-go/kubernetes/typed/core/v1"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/metrics/features"
	"k8s.io/component-base/metrics/prometheus/slis"
	"k8s.io/component-base/term"
	genericcontrollermanager "k8s.io/controller-manager/app"
	controllerhealthz "k8s.io/controller-manager/pkg/healthz"
	"k8s.io/klog/v2"

	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app/config"
	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app/options"
	"github.com/fastpv/pv-controller-manager/pkg/clientcert"
	"github.com/fastpv/pv-controller-manager/pkg/election"
	"github.com/fastpv/pv-controller-manager/pkg/upstreamguard"
	"github.com/fastpv/pv-controller-manager/pkg/version"
)

func init() {
	utilruntime.Must(logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
	utilruntime.Must(features.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
}

// clientCertificateCheckPeriod is how often the kubeconfig is read again for a renewed certificate.
const clientCertificateCheckPeriod = 30 * time.Second

// NewPVControllerManagerCommand creates the pv-controller-manager command with KCM-compatible flags.
func NewPVControllerManagerCommand() *cobra.Command {
	s, err := options.NewPVControllerManagerOptions()
	if err != nil {
		klog.Background().Error(err, "Unable to initialize command options")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}

	cmd := &cobra.Command{
		Use: options.ComponentName,
		Long: `pv-controller-manager runs the Kubernetes PersistentVolume binder (KCM's
persistentvolume-binder-controller) on its own, with patches that bind pre-bound claims at
once, retry optimistic-concurrency conflicts immediately and resync only unsettled objects.
Run kube-controller-manager with --controllers=*,-persistentvolume-binder-controller beside it.`,
		SilenceUsage: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			// Like KCM: the binder watches APIs generically; warnings would only be noise.
			restclient.SetDefaultWarningHandler(restclient.NoWarnings{})
			return s.ComponentGlobalsRegistry.Set()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if s.ShowVersion {
				fmt.Fprintln(cmd.OutOrStdout(), version.String())
				return nil
			}
			if err := logsapi.ValidateAndApply(s.Logs, utilfeature.DefaultFeatureGate); err != nil {
				return err
			}
			cliflag.PrintFlags(cmd.Flags())

			// The first SIGTERM/SIGINT cancels ctx: the binder stops, then the Lease is released.
			// A second one exits at once.
			ctx, stop := context.WithCancelCause(setupSignalContext())
			defer stop(nil)
			c, err := s.Config(ctx)
			if err != nil {
				return err
			}
			// A renewed client certificate is loaded by a restart (pkg/clientcert): the process
			// stops as for SIGTERM (the Lease released) and exits non-zero so it is restarted.
			certificates, err := clientcert.NewWatcher(c.Kubeconfig, c.LoadKubeconfig, clientCertificateCheckPeriod)
			if err != nil {
				return fmt.Errorf("--kubeconfig: %w", err)
			}
			go certificates.Watch(ctx, stop)
			if err := Run(ctx, c); err != nil {
				return err
			}
			if cause := context.Cause(ctx); errors.Is(cause, clientcert.ErrChanged) {
				return cause
			}
			return nil
		},
		Args: func(cmd *cobra.Command, args []string) error {
			for _, arg := range args {
				if len(arg) > 0 {
					return fmt.Errorf("%q does not take any arguments, got %q", cmd.CommandPath(), args)
				}
			}
			return nil
		},
	}

	fs := cmd.Flags()
	namedFlagSets := s.Flags()
	globalflag.AddGlobalFlags(namedFlagSets.FlagSet("global"), cmd.Name(), logs.SkipLoggingConfigurationFlags())
	for _, f := range namedFlagSets.FlagSets {
		fs.AddFlagSet(f)
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cliflag.SetUsageAndHelpFunc(cmd, namedFlagSets, cols)
	return cmd
}

// Run serves health and metrics, then runs the binder while holding the Lease (or at once with
// --leader-elect=false) until ctx is done.
func Run(ctx context.Context, c *config.Config) error {
	logger := klog.FromContext(ctx)
	logger.Info("Starting", "version", version.String())

	c.EventBroadcaster.StartStructuredLogging(0)
	c.EventBroadcaster.StartRecordingToSink(&v1core.EventSinkImpl{Interface: c.Client.CoreV1().Events("")})
	defer c.EventBroadcaster.Shutdown()

	var electionChecker *leaderelection.HealthzAdaptor
	var liveChecks []healthz.HealthChecker
	if c.Generic.LeaderElection.LeaderElect {
		electionChecker = leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
		liveChecks = append(liveChecks, electionChecker)
	}
	state := &binderState{warm: c.Standby.Warm}
	selector, err := c.UpstreamBinderGuard.Selector()
	if err != nil {
		return fmt.Errorf("--upstream-binder-pod-selector: %w", err)
	}
	guard := upstreamguard.New(upstreamguard.Config{
		Client:           c.Client,
		Namespace:        c.UpstreamBinderGuard.PodNamespace,
		Selector:         selector,
		Recorder:         c.EventRecorder,
		CheckPeriod:      c.UpstreamBinderGuard.CheckPeriod,
		AllowCoexistence: c.UpstreamBinderGuard.Allow,
		LeaseName:        c.UpstreamBinderGuard.LeaseName,
	})
	go guard.Run(ctx)
	if c.SecureServing != nil {
		handler := newHandler(ctx, c, state, guard, liveChecks)
		if _, _, err := c.SecureServing.Serve(handler, 0, ctx.Done()); err != nil {
			return err
		}
	}

	var warm informers.SharedInformerFactory
	if c.Standby.Warm {
		if warm, err = newBinderInformers(c); err != nil {
			return err
		}
		warmCtx, stopWarm := context.WithCancel(ctx)
		startWarmStandby(warmCtx, warm, &state.warmSynced)
		defer warm.Shutdown()
		defer stopWarm() // first: Shutdown waits for the informers to stop, also when the Lease was lost
	}
	runBinderOnce := func(ctx context.Context) {
		if err := runBinder(ctx, c, state, guard, warm); err != nil {
			logger.Error(err, "PersistentVolume binder failed")
			klog.FlushAndExit(klog.ExitFlushTimeout, 1)
		}
	}
	if !c.Generic.LeaderElection.LeaderElect {
		state.runUnelected(ctx, runBinderOnce)
		return nil
	}

	hostname, err := os.Hostname()
	if err != nil {
		return err
	}
	le := c.Generic.LeaderElection
	err = election.Run(ctx, election.Config{
		Client:        c.Client,
		Namespace:     le.ResourceNamespace,
		Name:          le.ResourceName,
		Identity:      hostname + "_" + string(uuid.NewUUID()), // two processes on one host must not share it
		EventRecorder: c.EventRecorder,
		LeaseDuration: le.LeaseDuration.Duration,
		RenewDeadline: le.RenewDeadline.Duration,
		RetryPeriod:   le.RetryPeriod.Duration,
		WatchDog:      electionChecker,
	}, func(ctx context.Context) {
		state.leading.Store(true)
		defer state.leading.Store(false)
		runWithTimeout(ctx, c.ControllerShutdownTimeout, runBinderOnce)
	})
	if errors.Is(err, election.ErrLeaseLost) {
		logger.Error(err, "Exiting: another instance may be binding now", "lease", klog.KRef(le.ResourceNamespace, le.ResourceName))
	}
	logger.Info("Stopped")
	return err
}

// runWithTimeout runs fn(ctx) and returns when fn returns, or at most timeout after ctx is done:
// a stuck API call must not keep the Lease from being released forever.
func runWithTimeout(ctx context.Context, timeout time.Duration, fn func(context.Context)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ctx)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		select {
		case <-done:
		case <-time.After(timeout):
			klog.FromContext(ctx).Error(nil, "Binder did not stop in time, releasing the Lease anyway", "timeout", timeout)
		}
	}
}

// apiAccessCheck is the readiness check "api-access": the guard has listed KCM's pods with this
// replica's identity, so it reaches the apiserver and is authorized.
func apiAccessCheck(guard *upstreamguard.Guard) func(*http.Request) error {
	return func(*http.Request) error {
		if _, known := guard.Active(); !known {
			return errors.New("kube-controller-manager's pods not listed yet (is this replica's kubeconfig valid and its RBAC installed?)")
		}
		return nil
	}
}

// newHandler builds the secure-port handler: /healthz and /livez (process alive, Lease renewed when
// leading), /readyz (also: caches synced when leading or standing by warm, KCM's pods listed, KCM's
// binder not running, not shutting down; /readyz?exclude=upstream-binder is "ready to bind"), /metrics, and KCM's
// debugging endpoints; all behind delegated authentication and authorization.
func newHandler(ctx context.Context, c *config.Config, state *binderState, guard *upstreamguard.Guard, liveChecks []healthz.HealthChecker) http.Handler {
	healthzHandler := controllerhealthz.NewMutableHealthzHandler(liveChecks...)
	mux := genericcontrollermanager.NewBaseHandler(&c.Generic.Debugging, healthzHandler)
	healthz.InstallLivezHandler(mux, liveChecks...)
	readyChecks := append([]healthz.HealthChecker{
		healthz.NewShutdownHealthz(ctx.Done()),
		healthz.NamedCheck("binder-caches", func(*http.Request) error { return state.cachesSynced() }),
		// This replica's identity has listed KCM's pods: it reaches the apiserver and is authorized.
		healthz.NamedCheck("api-access", apiAccessCheck(guard)),
		// Not ready while KCM's own binder runs and our writes are held (pkg/upstreamguard).
		healthz.NamedCheck("upstream-binder", guard.Check),
	}, liveChecks...)
	healthz.InstallReadyzHandler(mux, readyChecks...)
	slis.SLIMetricsWithReset{}.Install(mux)
	return genericcontrollermanager.BuildHandlerChain(mux, &c.Authorization, &c.Authentication)
}
