package options

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app/config"
	"github.com/fastpv/pv-controller-manager/deploy"

	"k8s.io/apimachinery/pkg/util/sets"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
)

func newFlagSet(t *testing.T) (*PVControllerManagerOptions, *pflag.FlagSet) {
	t.Helper()
	s, err := NewPVControllerManagerOptions()
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	return s, fs
}

// The flags design §2 says we keep from KCM. A missing one would break operators' copied manifests.
var sharedWithKCM = []string{
	"kubeconfig", "master", "kube-api-qps", "kube-api-burst", "kube-api-content-type", "controllers",
	"leader-elect", "leader-elect-lease-duration", "leader-elect-renew-deadline", "leader-elect-retry-period",
	"leader-elect-resource-lock", "leader-elect-resource-name", "leader-elect-resource-namespace",
	"pvclaimbinder-sync-period", "enable-dynamic-provisioning", "enable-hostpath-provisioner",
	"pv-recycler-minimum-timeout-nfs", "pv-recycler-increment-timeout-nfs",
	"pv-recycler-pod-template-filepath-nfs", "pv-recycler-minimum-timeout-hostpath",
	"pv-recycler-timeout-increment-hostpath", "pv-recycler-pod-template-filepath-hostpath",
	"flex-volume-plugin-dir", "secure-port", "bind-address", "tls-cert-file", "tls-private-key-file",
	"authentication-kubeconfig", "authentication-skip-lookup", "authorization-kubeconfig",
	"authorization-always-allow-paths", "feature-gates", "min-resync-period", "controller-shutdown-timeout",
	"profiling", "contention-profiling", "logging-format", "show-hidden-metrics-for-version",
}

func TestDefaultsEqualKCM(t *testing.T) {
	_, ours := newFlagSet(t)
	kcm, err := kcmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		t.Fatal(err)
	}
	kcmFlags := pflag.NewFlagSet("kcm", pflag.ContinueOnError)
	for _, f := range kcm.Flags(nil, nil, nil).FlagSets {
		kcmFlags.AddFlagSet(f)
	}

	for _, name := range sharedWithKCM {
		if ours.Lookup(name) == nil {
			t.Errorf("flag --%s of kube-controller-manager is missing", name)
		}
	}
	compared := 0
	ours.VisitAll(func(f *pflag.Flag) {
		k := kcmFlags.Lookup(f.Name)
		if k == nil {
			return
		}
		compared++
		if why, deviates := DeviationsFromKCM[f.Name]; deviates {
			if f.DefValue == k.DefValue {
				t.Errorf("--%s is listed as deviating from KCM (%s) but has KCM's default %q", f.Name, why, f.DefValue)
			}
			return
		}
		if f.DefValue != k.DefValue {
			t.Errorf("--%s default %q differs from KCM's %q", f.Name, f.DefValue, k.DefValue)
		}
		if f.Value.Type() != k.Value.Type() {
			t.Errorf("--%s type %s differs from KCM's %s", f.Name, f.Value.Type(), k.Value.Type())
		}
	})
	if compared < len(sharedWithKCM) {
		t.Errorf("compared only %d flags with KCM, want at least %d", compared, len(sharedWithKCM))
	}
}

func TestOnlyKnownFlags(t *testing.T) {
	_, fs := newFlagSet(t)
	for _, name := range []string{"enable-leader-migration", "leader-migration-config", "cloud-provider", "concurrent-deployment-syncs"} {
		if fs.Lookup(name) != nil {
			t.Errorf("--%s is accepted but means nothing for the binder", name)
		}
	}
}

func TestFullArgvParsedIntoConfig(t *testing.T) {
	s, fs := newFlagSet(t)
	argv := []string{
		"--kubeconfig=/etc/kubernetes/pv-controller-manager.conf",
		"--master=https://10.0.0.1:6443",
		"--kube-api-qps=250", "--kube-api-burst=500",
		"--kube-api-content-type=application/json",
		"--controllers=persistentvolume-binder",
		"--leader-elect=true", "--leader-elect-lease-duration=30s", "--leader-elect-renew-deadline=20s",
		"--leader-elect-retry-period=3s", "--leader-elect-resource-name=pvcm", "--leader-elect-resource-namespace=storage",
		"--pvclaimbinder-sync-period=1m",
		"--enable-dynamic-provisioning=false", "--enable-hostpath-provisioner=true",
		"--pv-recycler-minimum-timeout-nfs=100", "--pv-recycler-increment-timeout-nfs=11",
		"--pv-recycler-minimum-timeout-hostpath=12", "--pv-recycler-timeout-increment-hostpath=13",
		"--pv-recycler-pod-template-filepath-nfs=/nfs.yaml", "--pv-recycler-pod-template-filepath-hostpath=/hp.yaml",
		"--secure-port=10300", "--bind-address=127.0.0.1",
		"--controller-shutdown-timeout=5s",
		"--min-resync-period=6h",
		"--pvclaimbinder-full-resync-period=30m",
		"--pvclaimbinder-concurrent-syncs=4",
		"--pvclaimbinder-reserved-volume-grace-period=3s",
		"--pvclaimbinder-unclaimed-volume-grace-period=4s",
		"--leader-elect-warm-standby",
	}
	if err := fs.Parse(argv); err != nil {
		t.Fatal(err)
	}
	got := s.Generic
	pv := s.PersistentVolumeBinderController
	rec := pv.VolumeConfiguration.PersistentVolumeRecyclerConfiguration
	checks := []struct {
		name      string
		got, want interface{}
	}{
		{"kubeconfig", got.ClientConnection.Kubeconfig, "/etc/kubernetes/pv-controller-manager.conf"},
		{"master", s.Master, "https://10.0.0.1:6443"},
		{"qps", got.ClientConnection.QPS, float32(250)},
		{"burst", got.ClientConnection.Burst, int32(500)},
		{"content type", got.ClientConnection.ContentType, "application/json"},
		{"controllers", strings.Join(got.Controllers, ","), "persistentvolume-binder"},
		{"lease duration", got.LeaderElection.LeaseDuration.Duration, 30 * time.Second},
		{"renew deadline", got.LeaderElection.RenewDeadline.Duration, 20 * time.Second},
		{"retry period", got.LeaderElection.RetryPeriod.Duration, 3 * time.Second},
		{"lease name", got.LeaderElection.ResourceName, "pvcm"},
		{"lease namespace", got.LeaderElection.ResourceNamespace, "storage"},
		{"sync period", pv.PVClaimBinderSyncPeriod.Duration, time.Minute},
		{"dynamic provisioning", pv.VolumeConfiguration.EnableDynamicProvisioning, false},
		{"hostpath provisioner", pv.VolumeConfiguration.EnableHostPathProvisioning, true},

		{"recycler nfs min", rec.MinimumTimeoutNFS, int32(100)},
		{"recycler nfs incr", rec.IncrementTimeoutNFS, int32(11)},
		{"recycler hostpath min", rec.MinimumTimeoutHostPath, int32(12)},
		{"recycler hostpath incr", rec.IncrementTimeoutHostPath, int32(13)},
		{"recycler nfs template", rec.PodTemplateFilePathNFS, "/nfs.yaml"},
		{"recycler hostpath template", rec.PodTemplateFilePathHostPath, "/hp.yaml"},
		{"secure port", s.SecureServing.BindPort, 10300},
		{"bind address", s.SecureServing.BindAddress.String(), "127.0.0.1"},
		{"shutdown timeout", s.ControllerShutdownTimeout, 5 * time.Second},
		{"min resync", got.MinResyncPeriod.Duration, 6 * time.Hour},
		{"full resync", s.Binder.FullResyncPeriod, 30 * time.Minute},
		{"workers", s.Binder.ConcurrentSyncs, 4},
		{"reserved volume grace", s.Binder.ReservedVolumeGracePeriod, 3 * time.Second},
		{"unclaimed volume grace", s.Binder.UnclaimedVolumeGracePeriod, 4 * time.Second},
		{"warm standby", s.Standby.Warm, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v (%T), want %v (%T)", c.name, c.got, c.got, c.want, c.want)
		}
	}
	if err := s.validateControllers(); len(err) != 0 {
		t.Errorf("alias in --controllers rejected: %v", err)
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	tests := []struct {
		name    string
		argv    []string
		wantErr []string // substrings; empty means valid
	}{
		{name: "defaults"},
		{name: "star", argv: []string{"--controllers=*"}},
		{name: "canonical name", argv: []string{"--controllers=persistentvolume-binder-controller"}},
		{name: "star and another enabled", argv: []string{"--controllers=*,persistentvolume-binder"}},
		{name: "unknown controller", argv: []string{"--controllers=*,deployment-controller"},
			wantErr: []string{"--controllers", `"deployment-controller" is not a known controller`, "persistentvolume-binder-controller"}},
		{name: "disabled by name", argv: []string{"--controllers=*,-persistentvolume-binder-controller"},
			wantErr: []string{"--controllers", "disables persistentvolume-binder-controller"}},
		{name: "disabled by alias before star", argv: []string{"--controllers=-persistentvolume-binder,*"},
			wantErr: []string{"disables"}},
		{name: "empty list", argv: []string{"--controllers="}, wantErr: []string{"disables"}},
		{name: "zero sync period", argv: []string{"--pvclaimbinder-sync-period=0"}, wantErr: []string{"--pvclaimbinder-sync-period must be positive"}},
		{name: "negative sync period", argv: []string{"--pvclaimbinder-sync-period=-5s"}, wantErr: []string{"--pvclaimbinder-sync-period"}},
		{name: "negative recycler", argv: []string{"--pv-recycler-minimum-timeout-nfs=-1"}, wantErr: []string{"--pv-recycler-minimum-timeout-nfs must not be negative"}},
		{name: "KCM's lease", argv: []string{"--leader-elect-resource-name=kube-controller-manager"}, wantErr: []string{"--leader-elect-resource-name"}},
		{name: "KCM's lease without leader election", argv: []string{"--leader-elect=false", "--leader-elect-resource-name=kube-controller-manager"}},
		{name: "lease shorter than renew", argv: []string{"--leader-elect-lease-duration=5s", "--leader-elect-renew-deadline=10s"}, wantErr: []string{"--leader-elect-lease-duration"}},
		{name: "endpoints lock", argv: []string{"--leader-elect-resource-lock=endpoints"}, wantErr: []string{"--leader-elect-resource-lock"}},
		{name: "negative shutdown timeout", argv: []string{"--controller-shutdown-timeout=-1s"}, wantErr: []string{"--controller-shutdown-timeout"}},
		{name: "bad secure port", argv: []string{"--secure-port=70000"}, wantErr: []string{"--secure-port"}},
		{name: "secure serving off", argv: []string{"--secure-port=0"}},
		{name: "long sync period, default full resync follows it", argv: []string{"--pvclaimbinder-sync-period=10m"}},
		{name: "zero workers", argv: []string{"--pvclaimbinder-concurrent-syncs=0"}, wantErr: []string{"--pvclaimbinder-concurrent-syncs must be at least 1"}},
		{name: "full resync disabled", argv: []string{"--pvclaimbinder-full-resync-period=0"}},
		{name: "reserved volume grace off", argv: []string{"--pvclaimbinder-reserved-volume-grace-period=0"}},
		{name: "negative reserved volume grace", argv: []string{"--pvclaimbinder-reserved-volume-grace-period=-1s"}, wantErr: []string{"--pvclaimbinder-reserved-volume-grace-period must be 0 (off) or positive"}},
		{name: "unclaimed volume grace off", argv: []string{"--pvclaimbinder-unclaimed-volume-grace-period=0"}},
		{name: "negative unclaimed volume grace", argv: []string{"--pvclaimbinder-unclaimed-volume-grace-period=-1s"}, wantErr: []string{"--pvclaimbinder-unclaimed-volume-grace-period must be 0 (off) or positive"}},
		{name: "negative full resync", argv: []string{"--pvclaimbinder-full-resync-period=-1m"}, wantErr: []string{"--pvclaimbinder-full-resync-period must be 0 (disabled) or positive"}},
		{name: "guard allowed", argv: []string{"--allow-upstream-binder", "--upstream-binder-pod-selector=app=kcm,tier in (control-plane)"}},
		{name: "bad guard selector", argv: []string{"--upstream-binder-pod-selector=a in b"}, wantErr: []string{"--upstream-binder-pod-selector"}},
		{name: "empty guard namespace", argv: []string{"--upstream-binder-pod-namespace="}, wantErr: []string{"--upstream-binder-pod-namespace must not be empty"}},
		{name: "shadow", argv: []string{"--shadow", "--shadow-window=10m"}},
		{name: "zero shadow window", argv: []string{"--shadow", "--shadow-window=0"}, wantErr: []string{"--shadow-window must be positive"}},
		{name: "warm standby", argv: []string{"--leader-elect-warm-standby"}},
		{name: "warm standby without leader election", argv: []string{"--leader-elect=false", "--leader-elect-warm-standby"}, wantErr: []string{"--leader-elect-warm-standby needs --leader-elect"}},
		{name: "zero guard period", argv: []string{"--upstream-binder-check-period=0"}, wantErr: []string{"--upstream-binder-check-period must be positive"}},
		{name: "full resync shorter than sync period", argv: []string{"--pvclaimbinder-sync-period=10m", "--pvclaimbinder-full-resync-period=5m"}, wantErr: []string{"--pvclaimbinder-full-resync-period (5m0s) must be 0 (disabled) or at least --pvclaimbinder-sync-period (10m0s)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, fs := newFlagSet(t)
			if err := fs.Parse(tc.argv); err != nil {
				t.Fatal(err)
			}
			err := s.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error containing %q, got none", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestDefaultFullResyncFollowsLongSyncPeriod(t *testing.T) {
	s, fs := newFlagSet(t)
	if err := fs.Parse([]string{"--pvclaimbinder-sync-period=10m"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.Binder.FullResyncPeriod != 10*time.Minute {
		t.Fatalf("full resync period = %s, want the sync period (10m)", s.Binder.FullResyncPeriod)
	}
}

func TestMalformedFlagValueNamesTheFlag(t *testing.T) {
	for _, arg := range []string{"--kube-api-qps=fast", "--pvclaimbinder-sync-period=soon", "--leader-elect=maybe", "--kube-api-burst=1.5"} {
		_, fs := newFlagSet(t)
		err := fs.Parse([]string{arg})
		name := strings.SplitN(arg, "=", 2)[0]
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: want an error naming %s, got %v", arg, name, err)
		}
	}
	_, fs := newFlagSet(t)
	if err := fs.Parse([]string{"--no-such-flag"}); err == nil || !strings.Contains(err.Error(), "no-such-flag") {
		t.Errorf("unknown flag: want an error naming it, got %v", err)
	}
}

func TestKnownControllersHaveKCMNames(t *testing.T) {
	if !sets.New(KnownControllers()...).Has("persistentvolume-binder-controller") {
		t.Fatalf("KnownControllers() = %v", KnownControllers())
	}
	if ControllerAliases()["persistentvolume-binder"] != "persistentvolume-binder-controller" {
		t.Fatalf("alias missing: %v", ControllerAliases())
	}
}

// TestStaticPodManifestFlagsAreValid: the flags of deploy/static-pod are accepted and valid.
func TestStaticPodManifestFlagsAreValid(t *testing.T) {
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(deploy.StaticPodManifest, &pod); err != nil {
		t.Fatal(err)
	}
	command := pod.Spec.Containers[0].Command
	if len(command) < 2 || command[0] != "/usr/local/bin/"+ComponentName {
		t.Fatalf("unexpected command %q", command)
	}
	s, fs := newFlagSet(t)
	if err := fs.Parse(command[1:]); err != nil {
		t.Fatalf("flags of the static pod manifest: %v", err)
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("flags of the static pod manifest: %v", err)
	}
	if s.SecureServing.BindPort != DefaultSecurePort {
		t.Errorf("manifest probes use %d, the binary listens on %d", DefaultSecurePort, s.SecureServing.BindPort)
	}
}

// In shadow mode KCM's binder keeps running (the guard must not hold) and the Lease is the shadow's
// own, unless one is named.
func TestShadowReportsKCMsBinderAndTakesItsOwnLease(t *testing.T) {
	for _, tc := range []struct {
		argv      []string
		wantLease string
		wantAllow bool
	}{
		{argv: nil, wantLease: DefaultLeaseName},
		{argv: []string{"--shadow"}, wantLease: DefaultShadowLeaseName, wantAllow: true},
		{argv: []string{"--shadow", "--leader-elect-resource-name=pvcm-shadow-a"}, wantLease: "pvcm-shadow-a", wantAllow: true},
	} {
		s, fs := newFlagSet(t)
		if err := fs.Parse(append([]string{"--secure-port=0"}, tc.argv...)); err != nil {
			t.Fatal(err)
		}
		var c config.Config
		if err := s.ApplyTo(&c); err != nil {
			t.Fatalf("%v: %v", tc.argv, err)
		}
		if c.Generic.LeaderElection.ResourceName != tc.wantLease || c.UpstreamBinderGuard.Allow != tc.wantAllow || c.Shadow.Enabled != (tc.wantAllow) {
			t.Errorf("%v: lease %q, guard allows %t, shadow %t; want %q, %t, %t", tc.argv, c.Generic.LeaderElection.ResourceName,
				c.UpstreamBinderGuard.Allow, c.Shadow.Enabled, tc.wantLease, tc.wantAllow, tc.wantAllow)
		}
	}
}
