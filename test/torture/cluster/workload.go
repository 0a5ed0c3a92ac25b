package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Operation kinds of the workload, as the report counts them.
const (
	OpPrebound       = "create-prebound-pair"     // PV, and a claim naming it by spec.volumeName
	OpPreboundLate   = "create-prebound-pv-later" // the claim first, its PV a step later
	OpClaimRef       = "create-claimref-pair"     // PV reserving its claim by claimRef (no UID), and the claim
	OpMatched        = "create-matched-claim"     // a claim without volumeName, of one of the sizes
	OpFreeVolume     = "create-free-volume"       // a PV without claimRef, of one of the sizes
	OpDeleteClaim    = "delete-claim"
	OpDeleteVolume   = "delete-volume"
	OpDeleteReleased = "delete-released-volume"
	OpWFFCPod        = "create-wffc-volume-claim-pod" // WaitForFirstConsumer: a PV on one node, its claim, a pod: the scheduler picks the PV
	OpDeletePod      = "delete-pod"
	OpProvisioned    = "create-provisioned-claim" // a claim of the provisioning class: provisioned by the workload (consumers.go)
	OpProvision      = "provision-volume"         // the workload's provisioner created a claim's PV
	OpDeprovision    = "deprovision-volume"       // ... and deleted a Released one (reclaim policy Delete)
)

var sizes = []string{"1Gi", "2Gi", "5Gi"}

// workload draws operations from a seed. Every object carries the label torture=<run>.
type workload struct {
	client    clientset.Interface
	namespace string
	run       string
	rng       *rand.Rand
	next      int
	lock      sync.Mutex
	counts    map[string]int
	pending   []string // claims created first whose PV comes a step later
	errors    int
	nodes     []string // kwok nodes, for WaitForFirstConsumer volumes' node affinity
	classes   classes
	pods      []string
	// provisioned: claims the workload's provisioner has created a volume for.
	provisioned map[types.UID]bool
}

func newWorkload(client clientset.Interface, namespace, run string, seed uint64, nodes []string) *workload {
	return &workload{client: client, namespace: namespace, run: run, rng: rand.New(rand.NewPCG(seed, seed+1)), counts: map[string]int{},
		nodes: nodes, provisioned: map[types.UID]bool{}, classes: runClasses(run)}
}

func (w *workload) labels() map[string]string { return map[string]string{"torture": w.run} }

func (w *workload) name(prefix string) string {
	w.next++
	return fmt.Sprintf("%s-%s-%05d", w.run, prefix, w.next)
}

func (w *workload) volume(name, size string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: w.labels()},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              w.classes.static,
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/" + name}},
		},
	}
}

// claim is a claim of the static class; pre-bound to volumeName unless it is "" (annotated so,
// for the checker: annPrebound).
func (w *workload) claim(name, size, volumeName string) *v1.PersistentVolumeClaim {
	var annotations map[string]string
	if volumeName != "" {
		annotations = map[string]string{annPrebound: volumeName}
	}
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.namespace, Labels: w.labels(), Annotations: annotations},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(w.classes.static),
			VolumeName:       volumeName,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
	}
}

// step performs one random operation; the world (claims and volumes) is read from the checker.
func (w *workload) step(ctx context.Context, world *checker) {
	w.lock.Lock()
	defer w.lock.Unlock()
	ops := []struct {
		kind   string
		weight int
	}{{OpPrebound, 6}, {OpPreboundLate, 3}, {OpClaimRef, 4}, {OpMatched, 4}, {OpFreeVolume, 4}, {OpDeleteClaim, 4}, {OpDeleteVolume, 1}, {OpDeleteReleased, 2},
		{OpWFFCPod, 3}, {OpDeletePod, 2}, {OpProvisioned, 3}}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	pick := w.rng.IntN(total)
	var kind string
	for _, o := range ops {
		if pick < o.weight {
			kind = o.kind
			break
		}
		pick -= o.weight
	}
	// The provisioner answers claims waiting for it, as an external provisioner would.
	if kind, err, done := w.provision(ctx, world); done {
		w.do(kind, err)
		return
	}
	// A claim created first gets its PV now, before anything else.
	if len(w.pending) > 0 && w.rng.IntN(2) == 0 {
		name := w.pending[0]
		w.pending = w.pending[1:]
		w.do(OpPreboundLate, w.create(ctx, w.volume(name, "1Gi")))
		return
	}
	size := sizes[w.rng.IntN(len(sizes))]
	var err error
	switch kind {
	case OpPrebound:
		name := w.name("pb")
		if err = w.create(ctx, w.volume(name, size)); err == nil {
			err = w.create(ctx, w.claim(name, size, name))
		}
	case OpPreboundLate:
		name := w.name("late")
		err = w.create(ctx, w.claim(name, "1Gi", name))
		w.pending = append(w.pending, name)
	case OpClaimRef:
		name := w.name("ref")
		pv := w.volume(name, size)
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: w.namespace, Name: name}
		pv.Annotations = map[string]string{annReserves: w.namespace + "/" + name}
		if err = w.create(ctx, pv); err == nil {
			err = w.create(ctx, w.claim(name, size, ""))
		}
	case OpMatched:
		err = w.create(ctx, w.claim(w.name("m"), size, ""))
	case OpFreeVolume:
		err = w.create(ctx, w.volume(w.name("free"), size))
	case OpWFFCPod:
		err = w.createWFFC(ctx, size)
	case OpDeletePod:
		if name := w.randomPod(); name != "" {
			err = w.client.CoreV1().Pods(w.namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		} else {
			return
		}
	case OpProvisioned:
		claim := w.claim(w.name("prov"), size, "")
		claim.Spec.StorageClassName = ptr.To(w.classes.provisioned)
		err = w.create(ctx, claim)
	case OpDeleteClaim:
		if name := world.randomClaim(w.rng); name != "" {
			err = w.client.CoreV1().PersistentVolumeClaims(w.namespace).Delete(ctx, name, metav1.DeleteOptions{})
		} else {
			return
		}
	case OpDeleteVolume:
		if name := world.randomVolume(w.rng, ""); name != "" {
			err = w.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
		} else {
			return
		}
	case OpDeleteReleased:
		if name := world.randomVolume(w.rng, v1.VolumeReleased); name != "" {
			err = w.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
		} else {
			return
		}
	}
	w.do(kind, err)
}

func (w *workload) do(kind string, err error) {
	w.counts[kind]++
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsAlreadyExists(err) {
		w.errors++
	}
}

func (w *workload) create(ctx context.Context, obj any) error {
	var err error
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		_, err = w.client.CoreV1().PersistentVolumes().Create(ctx, o, metav1.CreateOptions{})
	case *v1.PersistentVolumeClaim:
		_, err = w.client.CoreV1().PersistentVolumeClaims(w.namespace).Create(ctx, o, metav1.CreateOptions{})
	case *v1.Pod:
		_, err = w.client.CoreV1().Pods(w.namespace).Create(ctx, o, metav1.CreateOptions{})
	}
	return err
}

func (w *workload) snapshot() (map[string]int, int) {
	w.lock.Lock()
	defer w.lock.Unlock()
	out := make(map[string]int, len(w.counts))
	for k, v := range w.counts {
		out[k] = v
	}
	return out, w.errors
}
