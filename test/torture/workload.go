package torture

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastpv/pv-controller-manager/test/invariants"
)

// The shapes a binder meets. Classes: two Immediate ones without a provisioner, one
// WaitForFirstConsumer (local volumes, bound where kube-scheduler picks them), one with an
// external provisioner (the workload plays it), and the empty class.
const (
	classGold       = "gold"
	classSilver     = "silver"
	classLocal      = "local"
	classExt        = "ext"
	provisionerName = "torture.example.com/ext"
	noProvisioner   = "kubernetes.io/no-provisioner"
	nodeA, nodeB    = "node-a", "node-b"

	annSelectedNode        = "volume.kubernetes.io/selected-node"
	annStorageProvisioner  = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvider = "volume.beta.kubernetes.io/storage-provisioner"
	annProvisionedBy       = "pv.kubernetes.io/provisioned-by"
	annBoundByController   = "pv.kubernetes.io/bound-by-controller"
)

var namespaces = []string{"ns1", "ns2"}

// Op kinds: what users, operators, kube-scheduler and an external provisioner do.
const (
	opCreatePV    = "create-pv"
	opCreateClaim = "create-claim"
	opDeletePV    = "delete-pv"
	opDeleteClaim = "delete-claim"
	opResizeClaim = "resize-claim"  // a Bound claim asks for more (volume expansion)
	opRecyclePV   = "recycle-pv"    // an operator clears a Released volume's claimRef to reuse it
	opSchedule    = "schedule"      // a pod using a WaitForFirstConsumer claim is scheduled
	opReserveUID  = "reserve-uid"   // create-pv whose claimRef carries the UID of the claim as it is then
	opStaleUID    = "reserve-stale" // create-pv whose claimRef carries a UID no claim has
	opStartPod    = "start-pod"     // a pod that uses a claim is created (pvc-protection keeps a claim it uses)
	opStopPod     = "stop-pod"      // the pods that use a claim are deleted
)

// Finalizers of the storage-object-in-use protection: the StorageObjectInUseProtection admission
// plugin adds them to every claim and volume created; KCM's pvc-protection and pv-protection
// controllers remove them once a deleted object is no longer used (a claim by a pod, a volume by
// a Bound claim), and only then is the object gone.
const (
	finalizerPVCProtection = "kubernetes.io/pvc-protection"
	finalizerPVProtection  = "kubernetes.io/pv-protection"
)

type op struct {
	After time.Duration // virtual time before this op
	Kind  string
	PV    *v1.PersistentVolume
	Claim *v1.PersistentVolumeClaim
	// Target names the object of deletes, resizes, recycles and schedules (namespace/name for claims).
	Target string
	pool   bool // one of the pool's operations (addPool)
}

func (o op) String() string {
	switch {
	case o.PV != nil:
		return fmt.Sprintf("+%s %s %s", o.After, o.Kind, invariants.DescribePV(o.PV))
	case o.Claim != nil:
		return fmt.Sprintf("+%s %s %s", o.After, o.Kind, describeClaim(o.Claim))
	}
	return fmt.Sprintf("+%s %s %s", o.After, o.Kind, o.Target)
}

func describeClaim(c *v1.PersistentVolumeClaim) string {
	s := fmt.Sprintf("%s/%s class=%q req=%s modes=%v mode=%s", c.Namespace, c.Name, ptr.Deref(c.Spec.StorageClassName, ""),
		c.Spec.Resources.Requests.Storage(), c.Spec.AccessModes, ptr.Deref(c.Spec.VolumeMode, ""))
	if c.Spec.Selector != nil {
		s += fmt.Sprintf(" selector=%v", c.Spec.Selector.MatchLabels)
	}
	if c.Spec.VolumeName != "" {
		s += " volumeName=" + c.Spec.VolumeName
	}
	return s
}

// workload is everything a seed decides: the faults, and the operations in order.
type workload struct {
	Seed   uint64
	Faults faultConfig
	// Protection: the cluster runs the storage-object-in-use protection, as every real cluster
	// does (admission adds the finalizers, KCM's protection controllers remove them): a deleted
	// claim or volume lingers with a deletionTimestamp while it is used. Without it (an operator
	// who removed the finalizers by hand, and every seed recorded before the model had them) a
	// deleted object is gone at once.
	Protection bool
	// Pool: the operations begin with a pool of volumes of distinct sizes and claims made for
	// them (addPool); BinderAfter: the binder starts only once that many operations are done.
	Pool        bool
	BinderAfter int
	Ops         []op
}

// withoutPool is w as the model drew it before it had pools: no pool, the binder from the start.
func (w workload) withoutPool() workload {
	if !w.Pool {
		return w
	}
	w.Ops = slices.DeleteFunc(slices.Clone(w.Ops), func(o op) bool { return o.pool })
	w.Pool, w.BinderAfter = false, 0
	return w
}

// withoutProtection is w as the model drew it before it had protection: no finalizers, no pods.
func (w workload) withoutProtection() workload {
	w.Protection = false
	w.Ops = slices.DeleteFunc(slices.Clone(w.Ops), func(o op) bool { return o.Kind == opStartPod || o.Kind == opStopPod })
	return w
}

func classes() []*storagev1.StorageClass {
	immediate, wffc := storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer
	return []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: classGold}, Provisioner: noProvisioner, VolumeBindingMode: &immediate},
		{ObjectMeta: metav1.ObjectMeta{Name: classSilver}, Provisioner: noProvisioner, VolumeBindingMode: &immediate},
		{ObjectMeta: metav1.ObjectMeta{Name: classLocal}, Provisioner: noProvisioner, VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: classExt}, Provisioner: provisionerName, VolumeBindingMode: &immediate},
	}
}

func nodes() []*v1.Node {
	var out []*v1.Node
	for _, n := range []string{nodeA, nodeB} {
		out = append(out, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"kubernetes.io/hostname": n}}})
	}
	return out
}

// generate draws a workload from seed: small pools (names are reused, so claims come back under
// the name of a deleted one), every shape, any arrival order, deletions right after creation
// (mid-bind), and a fault mix that is sometimes none at all.
func generate(seed uint64) workload {
	r := rand.New(rand.NewPCG(seed, 0x746f727475726521))
	w := workload{Seed: seed}
	switch f := r.IntN(10); {
	case f < 2: // fault-free: the differential counts writes
	case f < 7:
		w.Faults = faultConfig{Refuse: 0.05 + 0.15*r.Float64(), Lost: 0.1 * r.Float64(), WatchCuts: r.IntN(4), Compactions: r.IntN(2)}
	default: // heavy
		w.Faults = faultConfig{Refuse: 0.3 + 0.2*r.Float64(), Lost: 0.1 + 0.1*r.Float64(), WatchCuts: 2 + r.IntN(6), Compactions: 1 + r.IntN(2)}
	}
	nPV := 2 + r.IntN(14)
	nClaim := 2 + r.IntN(14)
	if r.IntN(8) == 0 { // now and then a bigger pool
		nPV, nClaim = 20+r.IntN(30), 20+r.IntN(30)
	}
	pvNames := make([]string, nPV)
	for i := range pvNames {
		pvNames[i] = fmt.Sprintf("pv-%d", i)
	}
	claimNames := make([]string, nClaim)
	for i := range claimNames {
		claimNames[i] = fmt.Sprintf("%s/c-%d", namespaces[r.IntN(len(namespaces))], i)
	}
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	delay := func() time.Duration {
		switch x := r.IntN(10); {
		case x < 4:
			return 0
		case x < 7:
			return time.Duration(1+r.IntN(50)) * time.Millisecond
		case x < 9:
			return time.Duration(200+r.IntN(1800)) * time.Millisecond
		default:
			return time.Duration(3+r.IntN(18)) * time.Second
		}
	}
	// First every object once, in any order; then mutations, with the pool reused.
	var first []op
	specs := map[string]*v1.PersistentVolume{} // the newest spec drawn for each PV name
	for _, n := range pvNames {
		o := newPVOp(r, n, claimNames)
		specs[n] = o.PV
		first = append(first, o)
	}
	for _, n := range claimNames {
		first = append(first, op{Kind: opCreateClaim, Claim: newClaim(r, n, pvNames, specs)})
	}
	r.Shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
	for _, o := range first {
		o.After = delay()
		w.Ops = append(w.Ops, o)
	}
	for range r.IntN(2 * (nPV + nClaim)) {
		var o op
		switch x := r.IntN(100); {
		case x < 22:
			o = op{Kind: opDeleteClaim, Target: pick(claimNames)}
		case x < 32:
			o = op{Kind: opDeletePV, Target: pick(pvNames)}
		case x < 52:
			o = op{Kind: opCreateClaim, Claim: newClaim(r, pick(claimNames), pvNames, specs)}
		case x < 67:
			o = newPVOp(r, pick(pvNames), claimNames)
			specs[o.PV.Name] = o.PV
		case x < 75:
			o = op{Kind: opResizeClaim, Target: pick(claimNames)}
		case x < 85:
			o = op{Kind: opRecyclePV, Target: pick(pvNames)}
		default:
			o = op{Kind: opSchedule, Target: pick(claimNames)}
		}
		o.After = delay()
		w.Ops = append(w.Ops, o)
	}
	// Protection and pods come from a stream of their own, so that the operations above stay
	// what each seed drew before the model had them; pods start and stop between them at no
	// extra time.
	r2 := rand.New(rand.NewPCG(seed, 0x70726f74656374))
	w.Protection = forced("TORTURE_PROTECTION", r2.IntN(4) > 0)
	if w.Protection {
		for range r2.IntN(nClaim + 1) {
			target := claimNames[r2.IntN(len(claimNames))]
			at := r2.IntN(len(w.Ops) + 1)
			w.Ops = slices.Insert(w.Ops, at, op{Kind: opStartPod, Target: target})
			if r2.IntN(2) == 0 {
				stop := at + 1 + r2.IntN(len(w.Ops)-at)
				w.Ops = slices.Insert(w.Ops, stop, op{Kind: opStopPod, Target: target})
			}
		}
	}
	// The pool comes from a stream of its own too, and last: a seed without one is the workload
	// it was before the model had pools.
	r3 := rand.New(rand.NewPCG(seed, 0x706f6f6c))
	w.Pool = forced("TORTURE_POOL", r3.IntN(4) == 0)
	if w.Pool {
		w.addPool(r3)
	}
	return w
}

// forced is drawn unless the environment variable env says "on" or "off" (a replay of a seed
// recorded with or without a part of the model).
func forced(env string, drawn bool) bool {
	switch os.Getenv(env) {
	case "off":
		return false
	case "on":
		return true
	}
	return drawn
}

// addPool puts before w's operations a pool of volumes of distinct sizes in one Immediate class
// and claims made for them, each claim larger than every smaller volume, so that under
// upstream's rules (the smallest fitting volume) every claim has one right volume. Half the
// pools are met by a binder that starts only once they all exist, as after an upgrade, a
// failover or a binder that was down: every volume and claim at once, the shape of `make
// e2e-kind`'s "smallest fit" specs that found bugs 10 (a claim given a larger volume while its
// own turned Available) and 17 (claims bound crosswise, the largest left Pending).
func (w *workload) addPool(r *rand.Rand) {
	class := []string{classGold, classSilver}[r.IntN(2)]
	n := 3 + r.IntN(6)
	sizes := r.Perm(12)[:n] // distinct sizes of 1-12Gi
	var ops []op
	for i, s := range sizes {
		name := fmt.Sprintf("pool-pv-%d", i)
		modes := []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
		if r.IntN(5) == 0 { // another access-mode group: upstream tries the fewest modes first
			modes = append(modes, v1.ReadOnlyMany)
		}
		ops = append(ops, op{Kind: opCreatePV, pool: true, PV: &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(fmt.Sprintf("%dGi", s+1))},
				AccessModes:                   modes,
				PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
				StorageClassName:              class,
				PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/torture/" + name}},
			},
		}})
		if r.IntN(6) == 0 {
			continue // a volume no claim is made for
		}
		// Within (size-1Gi, size]: no smaller volume of the pool fits it.
		req := resource.MustParse(fmt.Sprintf("%dMi", (s+1)*1024-r.IntN(4)*256))
		ops = append(ops, op{Kind: opCreateClaim, pool: true, Claim: &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[r.IntN(len(namespaces))], Name: fmt.Sprintf("pool-c-%d", i)},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: req}},
				StorageClassName: ptr.To(class),
			},
		}})
	}
	r.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	for i := range ops {
		if r.IntN(4) == 0 {
			ops[i].After = time.Duration(1+r.IntN(20)) * time.Millisecond
		}
	}
	if r.IntN(2) == 0 {
		w.BinderAfter = len(ops)
	}
	w.Ops = append(ops, w.Ops...)
}

func newPVOp(r *rand.Rand, name string, claimNames []string) op {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse([]string{"1Gi", "2Gi", "5Gi", "10Gi"}[r.IntN(4)])},
			AccessModes:                   accessModes(r),
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              []string{classGold, classGold, classSilver, classLocal, classLocal, "", classExt}[r.IntN(7)],
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/torture/" + name}},
		},
	}
	if r.IntN(10) < 3 {
		pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimDelete
	}
	if r.IntN(7) == 0 {
		pv.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock)
	}
	if x := r.IntN(3); x < 2 {
		pv.Labels = map[string]string{"tier": []string{"gold", "silver"}[x]}
	}
	if pv.Spec.StorageClassName == classLocal || r.IntN(5) == 0 {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: []string{[]string{nodeA, nodeB}[r.IntN(2)]}}},
		}}}}
	}
	kind := opCreatePV
	switch x := r.IntN(20); {
	case x < 5: // reserves a claim by name, as the docs' "Reserving a PersistentVolume" does
		ns, n, _ := strings.Cut(claimNames[r.IntN(len(claimNames))], "/")
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: n}
	case x < 8: // reserves the claim as it is when the PV is created (name and UID)
		ns, n, _ := strings.Cut(claimNames[r.IntN(len(claimNames))], "/")
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: n}
		kind = opReserveUID
	case x < 9: // a claimRef left by a deleted claim (restored from a backup, say)
		ns, n, _ := strings.Cut(claimNames[r.IntN(len(claimNames))], "/")
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: n, UID: "uid-stale"}
		kind = opStaleUID
	}
	return op{Kind: kind, PV: pv}
}

func accessModes(r *rand.Rand) []v1.PersistentVolumeAccessMode {
	switch r.IntN(6) {
	case 0, 1:
		return []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	case 2:
		return []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadOnlyMany}
	case 3:
		return []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}
	case 4:
		return []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
	default:
		return []v1.PersistentVolumeAccessMode{v1.ReadOnlyMany}
	}
}

func newClaim(r *rand.Rand, key string, pvNames []string, specs map[string]*v1.PersistentVolume) *v1.PersistentVolumeClaim {
	ns, name, _ := strings.Cut(key, "/")
	c := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      accessModes(r),
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse([]string{"500Mi", "1Gi", "2Gi", "3Gi"}[r.IntN(4)])}},
			StorageClassName: ptr.To([]string{classGold, classGold, classSilver, classLocal, "", classExt}[r.IntN(6)]),
		},
	}
	if r.IntN(7) == 0 {
		c.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock)
	}
	if r.IntN(10) < 6 { // most claims are made for a volume of the pool: they fit it, or nearly
		pv := specs[pvNames[r.IntN(len(pvNames))]]
		c.Spec.StorageClassName = ptr.To(pv.Spec.StorageClassName)
		c.Spec.AccessModes = pv.Spec.AccessModes[:1]
		c.Spec.VolumeMode = pv.Spec.VolumeMode
		if q := pv.Spec.Capacity.Storage(); r.IntN(8) > 0 {
			c.Spec.Resources.Requests[v1.ResourceStorage] = resource.MustParse(fmt.Sprintf("%dMi", 1+r.Int64N(q.Value()>>20)))
		}
		if pv.Labels != nil && r.IntN(3) == 0 {
			c.Spec.Selector = &metav1.LabelSelector{MatchLabels: pv.Labels}
		}
		if r.IntN(3) == 0 {
			c.Spec.VolumeName = pv.Name
		}
		return c
	}
	if r.IntN(5) == 0 {
		c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": []string{"gold", "silver"}[r.IntN(2)]}}
	}
	if r.IntN(4) == 0 { // pre-bound by spec.volumeName, to a PV that may come later, or never
		c.Spec.VolumeName = pvNames[r.IntN(len(pvNames))]
		if r.IntN(8) == 0 {
			c.Spec.VolumeName = "pv-never"
		}
	}
	return c
}
