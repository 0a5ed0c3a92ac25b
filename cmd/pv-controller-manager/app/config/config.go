// Package config holds the validated, ready-to-run configuration of pv-controller-manager.
package config

import (
	"time"

	"k8s.io/apimachinery/pkg/labels"

	apiserver "k8s.io/apiserver/pkg/server"
	clientset "k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	basecompatibility "k8s.io/component-base/compatibility"
	cmconfig "k8s.io/controller-manager/config"
	persistentvolumeconfig "k8s.io/kubernetes/pkg/controller/volume/persistentvolume/config"
)

// Config is what Run needs. It mirrors the parts of KCM's config that the binder uses.
type Config struct {
	// Generic is KCM's generic controller-manager configuration (client connection, leader election, debugging).
	Generic cmconfig.GenericControllerManagerConfiguration
	// PersistentVolumeBinderController is KCM's binder configuration (sync period, volume plugins).
	PersistentVolumeBinderController persistentvolumeconfig.PersistentVolumeBinderControllerConfiguration
	// Binder holds the binder's settings that KCM does not have (the patch series adds them).
	Binder Binder
	// UpstreamBinderGuard: hold writes while KCM runs its own binder.
	UpstreamBinderGuard UpstreamBinderGuard
	// Shadow: run beside KCM's binder with every write a dry run, and compare (pkg/shadow).
	Shadow Shadow
	// Standby: what a replica does while another holds the Lease.
	Standby Standby

	// SecureServing is nil when --secure-port=0.
	SecureServing  *apiserver.SecureServingInfo
	Authentication apiserver.AuthenticationInfo
	Authorization  apiserver.AuthorizationInfo

	// Kubeconfig is the rest config for every client we make (with QPS, burst and content type applied).
	Kubeconfig *restclient.Config
	// LoadKubeconfig reads --kubeconfig (or --master) again, as Kubeconfig was read: the client
	// certificate watcher compares what is on disk with what is in use (pkg/clientcert).
	LoadKubeconfig func() (*restclient.Config, error)
	// Client is used for leader election and events of the manager itself.
	Client           clientset.Interface
	EventBroadcaster record.EventBroadcaster
	EventRecorder    record.EventRecorder

	// ControllerShutdownTimeout bounds how long a stopping leader waits for in-flight syncs before
	// it releases the Lease anyway.
	ControllerShutdownTimeout time.Duration

	ComponentGlobalsRegistry basecompatibility.ComponentGlobalsRegistry
}

// Binder is the binder's configuration beyond KCM's (options.BinderOptions binds its flags).
type Binder struct {
	// FullResyncPeriod re-queues every claim and volume; 0 disables it.
	FullResyncPeriod time.Duration
	// ConcurrentSyncs is the number of claim workers and of volume workers.
	ConcurrentSyncs int
	// ReservedVolumeGracePeriod: see the controller's ControllerParameters.
	ReservedVolumeGracePeriod time.Duration
	// UnclaimedVolumeGracePeriod: see the controller's ControllerParameters.
	UnclaimedVolumeGracePeriod time.Duration
}

// Shadow configures shadow mode (options.ShadowOptions binds its flags).
type Shadow struct {
	Enabled bool
	// Window: a claim ours would have bound and KCM has not bound that long after counts only-ours.
	Window time.Duration
}

// Standby configures a replica that does not hold the Lease (options.StandbyOptions binds its flags).
type Standby struct {
	// Warm starts the binder's informers before the Lease is held, so a takeover does not wait for
	// their initial LIST.
	Warm bool
}

// UpstreamBinderGuard configures pkg/upstreamguard (options.UpstreamBinderGuardOptions binds its flags).
type UpstreamBinderGuard struct {
	// Allow binding while KCM runs its binder (warn only).
	Allow        bool
	PodNamespace string
	// PodSelector is a label selector (validated by the options; Selector parses it).
	PodSelector string
	CheckPeriod time.Duration
	// LeaseName is KCM's leader-election Lease; "" ignores it.
	LeaseName string
}

// Selector is PodSelector parsed; the options have validated it.
func (g UpstreamBinderGuard) Selector() (labels.Selector, error) {
	return labels.Parse(g.PodSelector)
}
