package torture

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/fastpv/pv-controller-manager/test/invariants"
)

// result is what one arm did with one seed. The parent test compares the two arms' results.
type result struct {
	Seed       uint64            `json:"seed"`
	Arm        string            `json:"arm"`
	Faults     string            `json:"faults"`
	Ops        int               `json:"ops"`
	Violations []violation       `json:"violations,omitempty"`
	Claims     map[string]string `json:"claims"`  // namespace/name -> "Bound pv-3", "Pending", ...
	Volumes    map[string]string `json:"volumes"` // name -> "Bound ns1/c-2", "Released ns1/c-2", "Available", ...
	// Deleting names the claims still being deleted at the end (a pod uses them).
	Deleting []string       `json:"deleting,omitempty"`
	Writes   map[string]int `json:"writes"` // the binder's committed writes by verb and resource
	// WorkloadWrites counts the committed writes of volumes and claims by everyone else.
	WorkloadWrites int            `json:"workloadWrites"`
	Injected       map[string]int `json:"injected"`
	Binds          int            `json:"binds"`
	// Transitions counts the binder's phase changes, by kind and phase.
	Transitions map[string]int `json:"transitions"`
	// BindPairs counts the binds by "namespace/name -> volume name".
	BindPairs map[string]int `json:"bindPairs"`
	// Excess is the capacity, in bytes, that Bound volumes give beyond their claims' requests at
	// the end; Pending the claims left Pending then (not being deleted).
	Excess  int64 `json:"excess"`
	Pending int   `json:"pending"`
	// Events counts the binder's events by object, type and reason (apiServer.events).
	Events map[string]int `json:"events,omitempty"`
	// Recreated: the volumes whose object at the end is not the first created under their name.
	Recreated []string `json:"recreated,omitempty"`
	// WorseFits: the claims left Pending at the end whose fitting volume went to a claim it fits
	// worse (checker.noteWorseFit), namespace/name -> what happened.
	WorseFits map[string]string `json:"worseFits,omitempty"`
	// Settle is the virtual time from the last operation to the binder's last write.
	Settle time.Duration `json:"settle"`
	Error  string        `json:"error,omitempty"`
}

func (r result) writesTotal() int {
	n := 0
	for _, v := range r.Writes {
		n += v
	}
	return n
}

// The settle phase: faults off, the run ends once the binder has written nothing for quiet
// (longer than the binder's own longest back-off: a provisioning operation that failed is not
// retried for up to 2m2s, upstream's goroutinemap exponential back-off, however often its claim is
// synced; then a sync period to notice), at least minSettle after the last operation (a reflector
// that failed to list may back off for up to a minute before it lists again), and at most
// maxSettle after it. A shorter quiet declared seed 163 settled while a provisioning retry was
// still due, in either arm (docs/maintainers/torture.md).
const (
	provisionMaxBackoff = 2*time.Minute + 2*time.Second
	quiet               = provisionMaxBackoff + syncPeriod + oursGracePeriod
	minSettle           = 2 * time.Minute
	maxSettle           = 20 * time.Minute
)

// runArm plays workload w against arm. It must run inside a synctest bubble: every wait below is
// virtual time, so a run of many simulated minutes takes milliseconds.
func runArm(arm string, w workload) (res result) {
	res = result{Seed: w.Seed, Arm: arm, Faults: w.Faults.String(), Ops: len(w.Ops)}
	s := newAPIServer()
	chk := newChecker()
	chk.strictChoice = arm == armOurs
	if os.Getenv("TORTURE_TRACE") != "" {
		chk.trace = func(e event) { fmt.Fprintf(os.Stderr, "%s %s\n", arm, traceLine(e, chk.start)) }
	}
	s.observer = chk.observe
	chk.sawBefore = s.sawBefore
	user := s.client(false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range classes() {
		if _, err := user.StorageV1().StorageClasses().Create(ctx, c, metav1.CreateOptions{}); err != nil {
			res.Error = err.Error()
			return res
		}
	}
	for _, n := range nodes() {
		if _, err := user.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			res.Error = err.Error()
			return res
		}
	}

	binder := s.client(true)
	s.mu.Lock()
	s.faults = newFaultPlan(w.Seed, w.Faults)
	s.protection = w.Protection
	s.mu.Unlock()
	factory := armInformers(arm, binder)
	ctrl, err := startArm(ctx, arm, binder, factory)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	binderCtx, stopBinder := context.WithCancel(ctx)
	s.mu.Lock()
	s.stopBinder = stopBinder
	s.mu.Unlock()
	stopped := make(chan struct{})
	// The binder starts before the operation at index w.BinderAfter (a binder that was not
	// running when the first objects were created lists them all at once).
	started := false
	startBinder := func() {
		started = true
		factory.Start(ctx.Done())
		go func() {
			defer close(stopped)
			ctrl.Run(binderCtx)
		}()
	}
	defer func() {
		cancel()
		if started {
			<-stopped
		}
		factory.Shutdown()
	}()
	if w.BinderAfter == 0 {
		startBinder()
	}

	// Watch cuts and compactions at times the seed draws over the operations' span.
	var span time.Duration
	for _, o := range w.Ops {
		span += o.After
	}
	r := rand.New(rand.NewPCG(w.Seed, 0x6661756c7473))
	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		type at struct {
			t    time.Duration
			kind string
		}
		var plan []at
		for range w.Faults.WatchCuts {
			kind := faultWatchCut
			if r.IntN(2) == 0 {
				kind = faultWatch410
			}
			plan = append(plan, at{time.Duration(r.Int64N(int64(span) + 1)), kind})
		}
		for range w.Faults.Compactions {
			plan = append(plan, at{time.Duration(r.Int64N(int64(span) + 1)), faultCompact})
		}
		slices.SortFunc(plan, func(a, b at) int { return int(a.t - b.t) })
		var now time.Duration
		for _, p := range plan {
			select {
			case <-ctx.Done():
				return
			case <-time.After(p.t - now):
			}
			now = p.t
			switch p.kind {
			case faultCompact:
				s.compact()
				s.cutWatches(false) // the reflectors' next watch is from a compacted resourceVersion
			default:
				s.cutWatches(p.kind == faultWatch410)
			}
			s.mu.Lock()
			s.faults.note(p.kind)
			s.mu.Unlock()
		}
	}()

	prov := &provisioner{client: user}
	provDone := make(chan struct{})
	go func() {
		defer close(provDone)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			prov.sync(ctx, s)
		}
	}()

	protDone := make(chan struct{})
	go func() {
		defer close(protDone)
		if !w.Protection {
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(protectionPeriod):
			}
			protect(ctx, s, user)
		}
	}()

	for i, o := range w.Ops {
		time.Sleep(o.After)
		if i == w.BinderAfter && i > 0 {
			startBinder()
		}
		apply(ctx, s, user, o, i)
	}
	if w.BinderAfter >= len(w.Ops) && w.BinderAfter > 0 {
		startBinder()
	}
	lastOp := time.Now()
	<-faultsDone
	s.mu.Lock()
	s.faults.enabled = false
	s.mu.Unlock()
	for {
		time.Sleep(5 * time.Second)
		last := s.lastBinderWrite()
		if last.Before(lastOp) {
			last = lastOp
		}
		if time.Since(lastOp) >= minSettle && time.Since(last) >= quiet || time.Since(lastOp) >= maxSettle {
			if last.After(lastOp) {
				res.Settle = last.Sub(lastOp)
			}
			break
		}
	}
	if os.Getenv("TORTURE_STACKS") != "" {
		buf := make([]byte, 1<<22)
		n := runtime.Stack(buf, true)
		os.Stderr.Write(buf[:n])
	}
	pvs, pvcs := s.snapshot()
	s.mu.Lock()
	chk.settled(pvs, pvcs)
	for _, h := range s.hotLoops {
		chk.violations = append(chk.violations, violation{Rule: ruleHotLoop, Detail: h.detail, At: h.at.Sub(chk.start).String()})
	}
	res.Violations = slices.Clone(chk.violations)
	res.Binds = chk.binds
	res.Transitions = maps.Clone(chk.transitions)
	res.BindPairs = maps.Clone(chk.bindPairs)
	res.Injected = s.faults.countsCopy()
	res.Writes = maps.Clone(s.writes)
	res.WorkloadWrites = s.workloadWrites
	res.Events = maps.Clone(s.events)
	if w := chk.worseFits(pvs, pvcs); len(w) > 0 {
		res.WorseFits = w
	}
	for _, pv := range pvs {
		if chk.pvCreates[pv.Name] > 1 {
			res.Recreated = append(res.Recreated, pv.Name)
		}
	}
	s.mu.Unlock()
	res.Claims, res.Volumes = endState(pvs, pvcs)
	extra, pending := excess(pvs, pvcs)
	res.Excess, res.Pending = extra.Value(), pending
	for _, c := range pvcs {
		if c.DeletionTimestamp != nil {
			res.Deleting = append(res.Deleting, invariants.ClaimKey(c))
		}
	}

	cancel()
	<-provDone
	<-protDone
	return res
}

func endState(pvs []*v1.PersistentVolume, pvcs []*v1.PersistentVolumeClaim) (map[string]string, map[string]string) {
	claims, volumes := map[string]string{}, map[string]string{}
	for _, c := range pvcs {
		claims[invariants.ClaimKey(c)] = strings.TrimSpace(string(c.Status.Phase) + " " + c.Spec.VolumeName)
	}
	for _, pv := range pvs {
		volumes[pv.Name] = strings.TrimSpace(string(pv.Status.Phase) + " " + strings.Trim(invariants.RefKey(pv.Spec.ClaimRef), "/"))
	}
	return claims, volumes
}

// apply performs one operation as its actor would; an operation that no longer applies (the
// object is gone, or in another state) does nothing, as a user's kubectl would fail.
func apply(ctx context.Context, s *apiServer, c kubernetes.Interface, o op, i int) {
	switch o.Kind {
	case opCreatePV, opStaleUID:
		_, _ = c.CoreV1().PersistentVolumes().Create(ctx, o.PV, metav1.CreateOptions{})
	case opReserveUID:
		pv := o.PV.DeepCopy()
		if claim, err := c.CoreV1().PersistentVolumeClaims(pv.Spec.ClaimRef.Namespace).Get(ctx, pv.Spec.ClaimRef.Name, metav1.GetOptions{}); err == nil {
			pv.Spec.ClaimRef.UID = claim.UID
		}
		_, _ = c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	case opCreateClaim:
		_, _ = c.CoreV1().PersistentVolumeClaims(o.Claim.Namespace).Create(ctx, o.Claim, metav1.CreateOptions{})
	case opDeletePV:
		_ = c.CoreV1().PersistentVolumes().Delete(ctx, o.Target, metav1.DeleteOptions{})
	case opDeleteClaim:
		ns, name, _ := strings.Cut(o.Target, "/")
		_ = c.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, name, metav1.DeleteOptions{})
	case opResizeClaim:
		ns, name, _ := strings.Cut(o.Target, "/")
		claim, err := c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || claim.Status.Phase != v1.ClaimBound {
			return
		}
		q := claim.Spec.Resources.Requests.Storage().DeepCopy()
		q.Add(resource.MustParse("1Gi"))
		claim.Spec.Resources.Requests[v1.ResourceStorage] = q
		_, _ = c.CoreV1().PersistentVolumeClaims(ns).Update(ctx, claim, metav1.UpdateOptions{})
	case opRecyclePV:
		pv, err := c.CoreV1().PersistentVolumes().Get(ctx, o.Target, metav1.GetOptions{})
		if err != nil || pv.Status.Phase != v1.VolumeReleased {
			return
		}
		pv.Spec.ClaimRef = nil
		_, _ = c.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
	case opSchedule:
		schedule(ctx, s, c, o.Target)
	case opStartPod:
		ns, name, _ := strings.Cut(o.Target, "/")
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-pod-%d", name, i)},
			Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}}},
		}
		_, _ = c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	case opStopPod:
		ns, name, _ := strings.Cut(o.Target, "/")
		pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		for _, pod := range pods.Items {
			if podUses(&pod, name) {
				_ = c.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{})
			}
		}
	default:
		panic(fmt.Sprintf("unknown op %q", o.Kind))
	}
}

// schedule does what kube-scheduler's volume binding does for a pod using a WaitForFirstConsumer
// claim: it picks a free local volume that fits, writes the claim into its claimRef, and
// annotates the claim with the chosen node. As its FindMatchingVolume does, a volume of the
// claim's class that reserves the claim by claimRef is the claim's only candidate: the pod goes to that volume's
// node, or nowhere if the volume modes differ (the model once placed such a pod on another
// node's free volume, and the binder then bound the reserving volume: torture bug 15).
func schedule(ctx context.Context, s *apiServer, c kubernetes.Interface, target string) {
	ns, name, _ := strings.Cut(target, "/")
	claim, err := c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil || ptr.Deref(claim.Spec.StorageClassName, "") != classLocal || claim.Status.Phase != v1.ClaimPending ||
		claim.Spec.VolumeName != "" || claim.Annotations[annSelectedNode] != "" {
		return
	}
	pvs, _ := s.snapshot()
	for _, pv := range pvs {
		ref := pv.Spec.ClaimRef
		if ref == nil || ref.Namespace != ns || ref.Name != name || ref.UID != "" && ref.UID != claim.UID || pv.Spec.StorageClassName != classLocal {
			continue // the scheduler lists the volumes of the claim's class only
		}
		if storagehelpers.CheckVolumeModeMismatches(&claim.Spec, &pv.Spec) {
			continue // FindMatchingVolume skips it and goes on looking
		}
		node := invariants.AffinityNode(pv)
		if node == "" {
			node = nodeA
		}
		if ref.UID == "" {
			ref.UID, ref.ResourceVersion = claim.UID, claim.ResourceVersion
			if _, err := c.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
				return
			}
		}
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, annSelectedNode, node)
		_, _ = c.CoreV1().PersistentVolumeClaims(ns).Update(ctx, claim, metav1.UpdateOptions{})
		return
	}
	for _, pv := range pvs {
		if pv.Spec.ClaimRef != nil || pv.Status.Phase != v1.VolumeAvailable || invariants.FitsAlways(pv, claim) != nil {
			continue
		}
		node := invariants.AffinityNode(pv)
		if node == "" {
			node = nodeA
		}
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: name, UID: claim.UID, ResourceVersion: claim.ResourceVersion}
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, annBoundByController, "yes")
		if _, err := c.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return
		}
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, annSelectedNode, node)
		_, _ = c.CoreV1().PersistentVolumeClaims(ns).Update(ctx, claim, metav1.UpdateOptions{})
		return
	}
}

// protectionPeriod: how often the model's protection controllers look (KCM's react to events
// within milliseconds when idle, later under load).
const protectionPeriod = 500 * time.Millisecond

// protect plays KCM's pvc-protection and pv-protection controllers for objects being deleted:
// a claim's finalizer goes once no pod uses the claim, a volume's once it is not Bound
// (upstream's pv-protection: "the PV is being used" while its phase is Bound).
func protect(ctx context.Context, s *apiServer, c kubernetes.Interface) {
	pvs, claims := s.snapshot()
	for _, claim := range claims {
		if claim.DeletionTimestamp == nil || !slices.Contains(claim.Finalizers, finalizerPVCProtection) {
			continue
		}
		pods, err := c.CoreV1().Pods(claim.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil || slices.ContainsFunc(pods.Items, func(p v1.Pod) bool { return podUses(&p, claim.Name) }) {
			continue
		}
		claim.Finalizers = slices.DeleteFunc(claim.Finalizers, func(f string) bool { return f == finalizerPVCProtection })
		_, _ = c.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
	}
	for _, pv := range pvs {
		if pv.DeletionTimestamp == nil || !slices.Contains(pv.Finalizers, finalizerPVProtection) || pv.Status.Phase == v1.VolumeBound {
			continue
		}
		pv.Finalizers = slices.DeleteFunc(pv.Finalizers, func(f string) bool { return f == finalizerPVProtection })
		_, _ = c.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
	}
}

func podUses(pod *v1.Pod, claimName string) bool {
	return slices.ContainsFunc(pod.Spec.Volumes, func(v v1.Volume) bool {
		return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claimName
	})
}

// provisioner plays an external provisioner: a PV for each claim the binder handed to it, and
// the deletion of its Released volumes (reclaim policy Delete).
type provisioner struct {
	client kubernetes.Interface
	done   map[string]bool
}

func (p *provisioner) sync(ctx context.Context, s *apiServer) {
	if p.done == nil {
		p.done = map[string]bool{}
	}
	pvs, claims := s.snapshot()
	for _, claim := range claims {
		if claim.Annotations[annStorageProvisioner] != provisionerName || claim.Status.Phase != v1.ClaimPending || claim.Spec.VolumeName != "" || p.done[string(claim.UID)] {
			continue
		}
		pv := &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(claim.UID), Annotations: map[string]string{annProvisionedBy: provisionerName}},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      v1.ResourceList{v1.ResourceStorage: claim.Spec.Resources.Requests.Storage().DeepCopy()},
				AccessModes:                   claim.Spec.AccessModes,
				VolumeMode:                    claim.Spec.VolumeMode,
				StorageClassName:              classExt,
				PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
				ClaimRef:                      &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID},
				PersistentVolumeSource:        v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: provisionerName, VolumeHandle: string(claim.UID)}},
			},
		}
		if _, err := p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err == nil || apierrors.IsAlreadyExists(err) {
			p.done[string(claim.UID)] = true
		}
	}
	for _, pv := range pvs {
		if pv.Annotations[annProvisionedBy] == provisionerName && pv.Status.Phase == v1.VolumeReleased &&
			pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimDelete {
			_ = p.client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
		}
	}
}

// traceLine is one commit as a replay prints it.
func traceLine(e event, start time.Time) string {
	who := "user  "
	if e.Binder {
		who = "binder"
	}
	var what string
	switch o := e.New.(type) {
	case *v1.PersistentVolume:
		what = fmt.Sprintf("pv %s phase=%s claimRef=%s(%s) ann=%v", o.Name, o.Status.Phase, invariants.RefKey(o.Spec.ClaimRef), invariants.RefUID(o), o.Annotations)
	case *v1.PersistentVolumeClaim:
		what = fmt.Sprintf("pvc %s uid=%s phase=%s volumeName=%s ann=%v", invariants.ClaimKey(o), o.UID, o.Status.Phase, o.Spec.VolumeName, o.Annotations)
	default:
		what = e.Resource
	}
	return fmt.Sprintf("rv %-4d +%-10s %s %-8s %s", e.RV, e.At.Sub(start), who, e.Type, what)
}
