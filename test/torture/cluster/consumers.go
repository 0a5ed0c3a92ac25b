package cluster

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The torture's storage classes, one set per run, so that a run's claims never match another
// run's volumes (the arms run one after the other on one cluster; a run's objects are deleted at
// its end, but thousands of claims take minutes to go: KCM removes their protection finalizers at
// its own client QPS).
type classes struct {
	// static: volumes created by the workload, bound at once (a class with no provisioner).
	static string
	// wffc: local volumes with node affinity, WaitForFirstConsumer: the scheduler picks a
	// volume for a pod's claim and writes the PV's claimRef; the binder completes the bind.
	wffc string
	// provisioned: dynamically provisioned by Provisioner. The binder annotates the claim for
	// it; the workload, acting as that external provisioner, creates the PV with the claim's
	// UID in its claimRef and deletes it once Released (reclaim policy Delete).
	provisioned string
}

// Kinds of class, as the report counts the claims ever Bound.
const (
	KindStatic      = "static"
	KindWFFC        = "wffc"
	KindProvisioned = "provisioned"
)

// Provisioner is the provisioner of the provisioned class: the workload itself.
const Provisioner = "torture.pv-controller-manager.example/provisioner"

const (
	// annPrebound and annReserves record, on the objects the workload creates, what a user asked
	// for: a claim pre-bound to a volume, a volume reserving a claim (the workload as a user or as
	// the provisioner). The checker reads them (invariants.Binding), not the binder.
	annPrebound = "torture.pv-controller-manager.example/prebound"
	annReserves = "torture.pv-controller-manager.example/reserves"

	annStorageProvisioner = "volume.kubernetes.io/storage-provisioner"
	annProvisionedBy      = "pv.kubernetes.io/provisioned-by"
)

func runClasses(run string) classes {
	return classes{static: "torture-" + run, wffc: "torture-wffc-" + run, provisioned: "torture-provisioned-" + run}
}

// kind of a class name of the run ("" for a class that is not the run's).
func (cl classes) kind(name string) string {
	switch name {
	case cl.static:
		return KindStatic
	case cl.wffc:
		return KindWFFC
	case cl.provisioned:
		return KindProvisioned
	}
	return ""
}

// ensureClasses creates the run's storage classes.
func ensureClasses(ctx context.Context, client clientset.Interface, cl classes, labels map[string]string) error {
	wffc, immediate := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	del := v1.PersistentVolumeReclaimDelete
	for _, class := range []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: cl.static, Labels: labels}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &immediate},
		{ObjectMeta: metav1.ObjectMeta{Name: cl.wffc, Labels: labels}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: cl.provisioned, Labels: labels}, Provisioner: Provisioner, VolumeBindingMode: &immediate, ReclaimPolicy: &del},
	} {
		if _, err := client.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("storage class %s: %w", class.Name, err)
		}
	}
	return nil
}

// listNodes names the cluster's nodes (kwok's), sorted: WaitForFirstConsumer volumes live on one.
func listNodes(ctx context.Context, client clientset.Interface) ([]string, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("the cluster has no nodes for WaitForFirstConsumer volumes and pods")
	}
	return names, nil
}

// createWFFC creates a local volume on a random node, a claim of its class and a pod using it.
func (w *workload) createWFFC(ctx context.Context, size string) error {
	name := w.name("wffc")
	node := w.nodes[w.rng.IntN(len(w.nodes))]
	pv := w.volume(name, size)
	pv.Spec.StorageClassName = w.classes.wffc
	pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
	}}}}
	if err := w.create(ctx, pv); err != nil {
		return err
	}
	claim := w.claim(name, size, "")
	claim.Spec.StorageClassName = ptr.To(w.classes.wffc)
	if err := w.create(ctx, claim); err != nil {
		return err
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.namespace, Labels: w.labels()},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "app", Image: "registry.invalid/torture:never-pulled"}},
			Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}},
		},
	}
	if err := w.create(ctx, pod); err != nil {
		return err
	}
	w.pods = append(w.pods, name)
	return nil
}

// randomPod removes and returns one of the pods the workload created, or "".
func (w *workload) randomPod() string {
	if len(w.pods) == 0 {
		return ""
	}
	i := w.rng.IntN(len(w.pods))
	name := w.pods[i]
	w.pods = append(w.pods[:i], w.pods[i+1:]...)
	return name
}

// provision acts as the external provisioner for one claim the binder handed to it, or deletes
// one Released provisioned volume; done is false when there was nothing to do.
func (w *workload) provision(ctx context.Context, world *checker) (kind string, err error, done bool) {
	if name := world.releasedProvisioned(); name != "" {
		return OpDeprovision, w.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{}), true
	}
	claim := world.awaitingProvisioner(w.provisioned)
	if claim == nil {
		return "", nil, false
	}
	w.provisioned[claim.UID] = true
	pv := w.volume("pvc-"+string(claim.UID), "1Gi")
	pv.Annotations = map[string]string{annProvisionedBy: Provisioner}
	pv.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: claim.Spec.Resources.Requests[v1.ResourceStorage]}
	pv.Spec.StorageClassName = w.classes.provisioned
	pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimDelete
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}
	metav1.SetMetaDataAnnotation(&pv.ObjectMeta, annReserves, claim.Namespace+"/"+claim.Name)
	return OpProvision, w.create(ctx, pv), true
}

// awaitingProvisioner is a Pending claim of the provisioning class that the binder handed to the
// provisioner (annotated) and that has no volume yet, or nil.
func (c *checker) awaitingProvisioner(done map[types.UID]bool) *v1.PersistentVolumeClaim {
	c.lock.Lock()
	defer c.lock.Unlock()
	var names []string
	for name, claim := range c.claims {
		if c.classes.kind(classOf(claim)) == KindProvisioned && claim.Status.Phase == v1.ClaimPending && claim.DeletionTimestamp == nil &&
			claim.Annotations[annStorageProvisioner] == Provisioner && !done[claim.UID] {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return c.claims[names[0]].DeepCopy()
}

// releasedProvisioned is a Released volume of the provisioning class, or "".
func (c *checker) releasedProvisioned() string {
	c.lock.Lock()
	defer c.lock.Unlock()
	var names []string
	for name, v := range c.volumes {
		if c.classes.kind(v.Spec.StorageClassName) == KindProvisioned && v.Status.Phase == v1.VolumeReleased && v.DeletionTimestamp == nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return names[0]
}

func classOf(claim *v1.PersistentVolumeClaim) string {
	if claim.Spec.StorageClassName == nil {
		return ""
	}
	return *claim.Spec.StorageClassName
}
