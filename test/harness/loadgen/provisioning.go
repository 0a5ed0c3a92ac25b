package loadgen

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// ScenarioProvisioning: N claims of a StorageClass whose provisioner is external, as with every
// CSI driver. The load generator plays external-provisioner: when the binder has handed a claim
// to that provisioner (annotation volume.kubernetes.io/storage-provisioner), it creates the
// claim's PV as external-provisioner does (name pvc-<claim UID>, spec.claimRef with the UID, the
// class, pv.kubernetes.io/provisioned-by). Latency is from the claim's create call to Bound, so
// it includes the binder's hand-over, the provisioner's reaction and the bind.
const ScenarioProvisioning = "provisioning"

type provisioning struct{ base }

func init() { Register(provisioning{}) }

func (provisioning) Name() string { return ScenarioProvisioning }
func (provisioning) Help() string {
	return "N claims of an external provisioner's class; pv-load creates their PVs as external-provisioner does"
}

func (provisioning) Shape(c *Config, _ int, claim *v1.PersistentVolumeClaim, _ *v1.PersistentVolume) {
	claim.Spec.StorageClassName = ptr.To(c.StorageClassName())
}

func (provisioning) Create(ctx context.Context, env *Env) (time.Time, error) {
	cfg := env.Config
	if err := ensureStorageClass(ctx, env.Client, cfg); err != nil {
		return time.Time{}, err
	}
	prov, err := startProvisioner(env.Watch, env.Client, cfg, cfg.Concurrency)
	if err != nil {
		return time.Time{}, err
	}
	env.state = prov
	start := time.Now()
	return start, env.ForEach(ctx, func(i int) error {
		env.Started(cfg.name(i))
		return createClaim(ctx, env.Client, cfg.Claim(i))
	})
}

// Finish: claims a failed provisioning left unbound say nothing about the binder.
func (provisioning) Finish(_ context.Context, env *Env, _ *Result) error {
	return env.state.(*provisioner).failure()
}

// WritesAfterStart: the N claims and the provisioner's N PVs, and 4 writes per bind.
func (provisioning) WritesAfterStart(n int) int { return 2*n + 4*n }

func (provisioning) CheckBind(_ *Config, claim *v1.PersistentVolumeClaim) string {
	if claim.Spec.VolumeName != "pvc-"+string(claim.UID) {
		return fmt.Sprintf("claim %s is bound to %s, not to the volume provisioned for it", claim.Name, claim.Spec.VolumeName)
	}
	return ""
}

// Provisioner is the provisioner name of the provisioning scenario's StorageClass.
const Provisioner = "loadgen.pv-controller-manager.fastpv.io"

// Annotations external-provisioner reads and writes (sig-storage-lib-external-provisioner).
const (
	annStorageProvisioner = "volume.kubernetes.io/storage-provisioner"
	annProvisionedBy      = "pv.kubernetes.io/provisioned-by"
)

// StorageClassName is the class of the provisioning scenario's claims.
func (c *Config) StorageClassName() string { return c.Prefix + "-external" }

// StorageClass is the provisioning scenario's class: immediate binding, external provisioner.
func (c *Config) StorageClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: c.StorageClassName(), Labels: map[string]string{"loadgen": c.Prefix}},
		Provisioner:       Provisioner,
		ReclaimPolicy:     ptr.To(v1.PersistentVolumeReclaimRetain),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
}

// ProvisionedVolume is the PV external-provisioner would create for claim.
func (c *Config) ProvisionedVolume(claim *v1.PersistentVolumeClaim) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "pvc-" + string(claim.UID),
			Labels:      map[string]string{"loadgen": c.Prefix},
			Annotations: map[string]string{annProvisionedBy: Provisioner},
		},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      claim.Spec.Resources.Requests,
			AccessModes:                   claim.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              c.StorageClassName(),
			VolumeMode:                    claim.Spec.VolumeMode,
			ClaimRef: &v1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion,
			},
			PersistentVolumeSource: v1.PersistentVolumeSource{
				CSI: &v1.CSIPersistentVolumeSource{Driver: Provisioner, VolumeHandle: string(claim.UID)},
			},
		},
	}
}

// handedToUs tells whether the binder has handed claim to our provisioner and it has no volume.
func handedToUs(claim *v1.PersistentVolumeClaim) bool {
	return claim.Annotations[annStorageProvisioner] == Provisioner && claim.Spec.VolumeName == "" && claim.DeletionTimestamp == nil
}

// provisioner creates one PV per claim handed to it, on `workers` goroutines.
type provisioner struct {
	cfg    *Config
	client clientset.Interface
	lock   sync.Mutex
	seen   map[types.UID]bool
	work   chan *v1.PersistentVolumeClaim
	err    error // the first failure, under lock
}

// failure returns the first volume the provisioner failed to create, if any.
func (p *provisioner) failure() error {
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.err
}

// startProvisioner watches the run's claims and provisions until ctx is done.
func startProvisioner(ctx context.Context, client clientset.Interface, cfg *Config, workers int) (*provisioner, error) {
	p := &provisioner{cfg: cfg, client: client, seen: map[types.UID]bool{}, work: make(chan *v1.PersistentVolumeClaim, cfg.Count)}
	for range workers {
		go p.run(ctx)
	}
	err := watchClaims(ctx, client, cfg.Namespace, "loadgen="+cfg.Prefix, func(claim *v1.PersistentVolumeClaim, _ time.Time) {
		if !handedToUs(claim) {
			return
		}
		p.lock.Lock()
		first := !p.seen[claim.UID]
		p.seen[claim.UID] = true
		p.lock.Unlock()
		if first {
			p.work <- claim
		}
	})
	return p, err
}

func (p *provisioner) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case claim := <-p.work:
			// external-provisioner retries with backoff; a create that fails for another reason
			// than the volume existing is retried here a few times, then reported.
			var err error
			for attempt := 0; attempt < 5; attempt++ {
				_, err = p.client.CoreV1().PersistentVolumes().Create(ctx, p.cfg.ProvisionedVolume(claim), metav1.CreateOptions{})
				if err == nil || apierrors.IsAlreadyExists(err) || ctx.Err() != nil {
					err = nil
					break
				}
				time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
			}
			if err != nil {
				p.lock.Lock()
				if p.err == nil {
					p.err = fmt.Errorf("provisioning a volume for claim %s: %w", claim.Name, err)
				}
				p.lock.Unlock()
			}
		}
	}
}

// ensureStorageClass creates the provisioning scenario's class unless it exists.
func ensureStorageClass(ctx context.Context, client clientset.Interface, cfg *Config) error {
	_, err := client.StorageV1().StorageClasses().Create(ctx, cfg.StorageClass(), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
