package torture

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// apiServer is the model of kube-apiserver the torture runs a binder against: one store with a
// global resourceVersion, optimistic concurrency (409 on a stale resourceVersion), the status
// subresource (an update keeps the stored status, a status update keeps the stored spec), the
// PVC validation that matters to a binder (spec.volumeName set once; spec otherwise immutable
// except a bound claim's requests), no-op updates that write nothing, and watches that replay
// from any resourceVersion still in the history (410 Gone before it). Every committed change is
// shown to the observer (the invariant checker) in commit order, under the store's lock.
type apiServer struct {
	mu       sync.Mutex
	rv       int64
	uids     int64
	objects  map[string]map[string]runtime.Object // resource -> namespace/name -> object
	history  []event                              // every committed change, in resourceVersion order
	horizon  int64                                // resourceVersions at or below it are compacted
	watchers map[*watcher]struct{}
	observer func(e event)
	// faults decides what goes wrong for a request of the binder's client; nil for the workload's.
	faults *faultPlan
	// protection: the StorageObjectInUseProtection admission plugin adds its finalizer to every
	// claim and volume created (workload.Protection).
	protection bool
	// writes counts the binder's committed writes by "verb resource[/subresource]".
	writes    map[string]int
	lastWrite time.Time // the binder's last committed write
	// workloadWrites counts the other clients' committed writes of volumes and claims (users,
	// kube-scheduler, the provisioner, the protection controllers): a binder that does part of
	// the scheduler's work (a claimRef's UID) saves one of theirs.
	workloadWrites int
	// events counts the events the binder created, by eventKey (a repeat of one is a patch of
	// its count, not counted).
	events map[string]int
	// bursts counts the binder's write requests per object and observed version (the
	// resourceVersion the update was based on), refused or not, that came less than
	// hotLoopGap after the one before: a binder that writes one object again and again
	// against the same version, with no back-off, is in a hot loop.
	bursts   map[string]*writeBurst
	hotLoops []hotLoop // one per object and version found in a hot loop
	// binderSaw records, per resource, when the binder's informers got each newer
	// resourceVersion (a list, or an event its watch delivered): the checker judges a bind
	// against what the binder could have known.
	binderSaw map[string][]sawMark
	// stopBinder stops the binder found in a hot loop: no virtual time passes while it spins,
	// so the run could not end otherwise. The run then settles and reports the finding.
	stopBinder func()
}

type sawMark struct {
	rv int64
	at time.Time
}

// noteSeen records that the binder's informer of resource has seen everything up to rv.
// Called with s.mu held.
func (s *apiServer) noteSeen(resource string, rv int64) {
	if s.binderSaw == nil {
		s.binderSaw = map[string][]sawMark{}
	}
	marks := s.binderSaw[resource]
	if len(marks) > 0 && marks[len(marks)-1].rv >= rv {
		return
	}
	s.binderSaw[resource] = append(marks, sawMark{rv: rv, at: time.Now()})
}

// sawBefore tells whether the binder's informer of resource had seen rv before now (at an
// earlier virtual instant, so that its handlers have run). Called with s.mu held.
func (s *apiServer) sawBefore(resource string, rv int64) bool {
	marks := s.binderSaw[resource]
	i, _ := slices.BinarySearchFunc(marks, rv, func(m sawMark, rv int64) int { return cmp.Compare(m.rv, rv) })
	return i < len(marks) && marks[i].at.Before(time.Now())
}

type hotLoop struct {
	detail string
	at     time.Time
}

type writeBurst struct {
	last time.Time
	n    int
}

const (
	// hotLoopGap: retries of one key back off at least 1 ms (the controller's first step).
	hotLoopGap = time.Millisecond
	// hotLoopBurst: more writes than every worker of both kinds could make at one instant
	// (32 + 32) against one version of one object.
	hotLoopBurst = 64
)

// noteWrite counts a write request of the binder and tells whether the binder is in a hot loop.
func (s *apiServer) noteWrite(verb, resource, name, version string) bool {
	if s.bursts == nil {
		s.bursts = map[string]*writeBurst{}
	}
	id := verb + " " + resource + " " + name + "@" + version
	b := s.bursts[id]
	if b == nil {
		b = &writeBurst{}
		s.bursts[id] = b
	}
	now := time.Now()
	if b.n > 0 && now.Sub(b.last) < hotLoopGap {
		b.n++
	} else {
		b.n = 1
	}
	b.last = now
	if b.n == hotLoopBurst+1 {
		s.hotLoops = append(s.hotLoops, hotLoop{at: now, detail: fmt.Sprintf("%d %s requests for %s against version %s, each less than %s after the one before; the binder was stopped", b.n, verb, name, version, hotLoopGap)})
		if s.stopBinder != nil {
			s.stopBinder()
		}
	}
	return len(s.hotLoops) > 0
}

type event struct {
	Type     watch.EventType
	Resource string
	Old, New runtime.Object // Old is nil for ADDED; for DELETED New is the last state
	RV       int64
	At       time.Time
	Binder   bool // written by the binder's client (else by the workload: users, scheduler, provisioner)
}

const (
	resPV    = "persistentvolumes"
	resPVC   = "persistentvolumeclaims"
	resClass = "storageclasses"
	resPod   = "pods"
	resNode  = "nodes"
)

func newAPIServer() *apiServer {
	return &apiServer{
		objects:  map[string]map[string]runtime.Object{resPV: {}, resPVC: {}, resClass: {}, resPod: {}, resNode: {}},
		watchers: map[*watcher]struct{}{},
		writes:   map[string]int{},
		events:   map[string]int{},
	}
}

// eventKey names an event by what it is about: "Normal FailedBinding pvc ns1/c-2".
func eventKey(ev *v1.Event) string {
	o := ev.InvolvedObject
	kind := map[string]string{"PersistentVolumeClaim": "pvc", "PersistentVolume": "pv"}[o.Kind]
	if kind == "" {
		kind = o.Kind
	}
	return fmt.Sprintf("%s %s %s %s", ev.Type, ev.Reason, kind, strings.Trim(o.Namespace+"/"+o.Name, "/"))
}

// client returns a clientset served by this model. binder marks the client whose requests the
// fault plan may break and whose writes are counted.
func (s *apiServer) client(binder bool) *fake.Clientset {
	c := fake.NewClientset()
	c.PrependReactor("*", "*", func(action core.Action) (bool, runtime.Object, error) {
		return s.react(action, binder)
	})
	c.PrependWatchReactor("*", func(action core.Action) (bool, watch.Interface, error) {
		w, err := s.watch(action, binder)
		return true, w, err
	})
	return c
}

func key(obj runtime.Object) string {
	m, _ := metaOf(obj)
	return storeKey(m.GetNamespace(), m.GetName())
}

func storeKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func metaOf(obj runtime.Object) (metav1.Object, bool) {
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		return o, true
	case *v1.PersistentVolumeClaim:
		return o, true
	case *storagev1.StorageClass:
		return o, true
	case *v1.Pod:
		return o, true
	case *v1.Node:
		return o, true
	}
	return nil, false
}

func (s *apiServer) react(action core.Action, binder bool) (bool, runtime.Object, error) {
	resource := action.GetResource().Resource
	if resource == "events" { // not stored; the binder's are counted by object, type and reason
		if a, ok := action.(core.CreateAction); ok {
			if ev, ok := a.GetObject().(*v1.Event); ok && binder && action.GetVerb() == "create" {
				s.mu.Lock()
				s.events[eventKey(ev)]++
				s.mu.Unlock()
			}
			return true, a.GetObject(), nil
		}
		return true, &v1.Event{}, nil
	}
	if _, ok := s.objects[resource]; !ok {
		return true, nil, apierrors.NewNotFound(action.GetResource().GroupResource(), "")
	}
	verb := action.GetVerb()
	if action.GetSubresource() != "" {
		verb += "/" + action.GetSubresource()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if binder && strings.HasPrefix(verb, "update") {
		obj := action.(core.UpdateAction).GetObject()
		m, _ := metaOf(obj)
		s.noteWrite(verb, resource, key(obj), m.GetResourceVersion())
	}
	var f fault
	if binder && s.faults != nil {
		f = s.faults.request(verb, resource, requestName(action))
		if f.before != nil {
			return true, nil, f.before
		}
	}
	obj, err := s.serve(action, verb, resource, binder)
	if err == nil && f.after != nil {
		return true, nil, f.after // applied, but the answer is lost
	}
	return true, obj, err
}

func requestName(action core.Action) string {
	switch a := action.(type) {
	case core.GetAction:
		return a.GetNamespace() + "/" + a.GetName()
	case core.DeleteAction:
		return a.GetNamespace() + "/" + a.GetName()
	case core.UpdateAction:
		return a.GetNamespace() + "/" + key(a.GetObject())
	case core.CreateAction:
		return a.GetNamespace() + "/" + key(a.GetObject())
	}
	return action.GetNamespace() + "/"
}

func (s *apiServer) serve(action core.Action, verb, resource string, binder bool) (runtime.Object, error) {
	gr := action.GetResource().GroupResource()
	store := s.objects[resource]
	// By verb: the action interfaces overlap (a delete is also a GetAction, an update a CreateAction).
	switch verb {
	case "get":
		a := action.(core.GetAction)
		obj, ok := store[storeKey(a.GetNamespace(), a.GetName())]
		if !ok {
			return nil, apierrors.NewNotFound(gr, a.GetName())
		}
		return obj.DeepCopyObject(), nil
	case "list":
		if binder {
			s.noteSeen(resource, s.rv)
		}
		return s.list(resource, action.GetNamespace())
	case "update", "update/status":
		return s.update(action.(core.UpdateAction).GetObject().DeepCopyObject(), verb, resource, gr, action.GetSubresource() == "status", binder)
	case "create":
		obj := action.(core.CreateAction).GetObject().DeepCopyObject()
		m, _ := metaOf(obj)
		if m.GetName() == "" {
			return nil, apierrors.NewBadRequest("name is required")
		}
		if _, exists := store[key(obj)]; exists {
			return nil, apierrors.NewAlreadyExists(gr, m.GetName())
		}
		s.uids++
		m.SetUID(types.UID(fmt.Sprintf("uid-%d-%s", s.uids, m.GetName())))
		m.SetCreationTimestamp(metav1.NewTime(time.Now()))
		m.SetResourceVersion("")
		m.SetDeletionTimestamp(nil)
		defaultObject(obj)
		if s.protection {
			switch resource {
			case resPV:
				m.SetFinalizers(appendMissing(m.GetFinalizers(), finalizerPVProtection))
			case resPVC:
				m.SetFinalizers(appendMissing(m.GetFinalizers(), finalizerPVCProtection))
			}
		}
		s.commit(watch.Added, resource, nil, obj, binder, verb)
		return obj.DeepCopyObject(), nil
	case "delete":
		a := action.(core.DeleteAction)
		old, ok := store[storeKey(a.GetNamespace(), a.GetName())]
		if !ok {
			return nil, apierrors.NewNotFound(gr, a.GetName())
		}
		if pre := a.GetDeleteOptions().Preconditions; pre != nil {
			om, _ := metaOf(old)
			if pre.UID != nil && *pre.UID != om.GetUID() || pre.ResourceVersion != nil && *pre.ResourceVersion != om.GetResourceVersion() {
				return nil, apierrors.NewConflict(gr, a.GetName(), fmt.Errorf("precondition failed"))
			}
		}
		om, _ := metaOf(old)
		if len(om.GetFinalizers()) > 0 {
			// Finalizers hold it: the delete only marks it (graceful deletion with period 0, as
			// for claims and volumes); it is gone once the last finalizer is removed.
			if om.GetDeletionTimestamp() != nil {
				return old.DeepCopyObject(), nil
			}
			obj := old.DeepCopyObject()
			m, _ := metaOf(obj)
			now := metav1.NewTime(time.Now())
			m.SetDeletionTimestamp(&now)
			m.SetDeletionGracePeriodSeconds(ptr.To[int64](0))
			s.commit(watch.Modified, resource, old, obj, binder, verb)
			return obj.DeepCopyObject(), nil
		}
		s.commit(watch.Deleted, resource, old, old.DeepCopyObject(), binder, verb)
		return nil, nil
	}
	return nil, apierrors.NewMethodNotSupported(gr, verb)
}

// update serves an update of the object or of its status subresource.
func (s *apiServer) update(obj runtime.Object, verb, resource string, gr schema.GroupResource, status, binder bool) (runtime.Object, error) {
	store := s.objects[resource]
	k := key(obj)
	old, ok := store[k]
	if !ok {
		return nil, apierrors.NewNotFound(gr, k)
	}
	m, _ := metaOf(obj)
	om, _ := metaOf(old)
	if m.GetResourceVersion() != "" && m.GetResourceVersion() != om.GetResourceVersion() {
		return nil, apierrors.NewConflict(gr, m.GetName(), fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	if m.GetUID() != "" && m.GetUID() != om.GetUID() {
		return nil, apierrors.NewConflict(gr, m.GetName(), fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", m.GetUID(), om.GetUID()))
	}
	m.SetUID(om.GetUID())
	m.SetCreationTimestamp(om.GetCreationTimestamp())
	// An update cannot set or clear the deletion mark, a status update cannot change the
	// finalizers, and no finalizer may be added to an object being deleted.
	m.SetDeletionTimestamp(om.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(om.GetDeletionGracePeriodSeconds())
	if status {
		m.SetFinalizers(om.GetFinalizers())
	}
	if om.GetDeletionTimestamp() != nil {
		for _, f := range m.GetFinalizers() {
			if !slices.Contains(om.GetFinalizers(), f) {
				return nil, apierrors.NewInvalid(schema.GroupKind{Kind: kindOf(resource)}, m.GetName(), nil)
			}
		}
	}
	if err := prepareUpdate(obj, old, status); err != nil {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: kindOf(resource)}, m.GetName(), nil)
	}
	m.SetResourceVersion(om.GetResourceVersion())
	if apiequality.Semantic.DeepEqual(obj, old) {
		return old.DeepCopyObject(), nil // the apiserver writes nothing for a no-op update
	}
	if m.GetDeletionTimestamp() != nil && len(m.GetFinalizers()) == 0 {
		// The last finalizer removed from an object being deleted: the update deletes it.
		s.commit(watch.Deleted, resource, old, obj, binder, verb)
		return obj.DeepCopyObject(), nil
	}
	s.commit(watch.Modified, resource, old, obj, binder, verb)
	return obj.DeepCopyObject(), nil
}

func appendMissing(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func kindOf(resource string) string {
	switch resource {
	case resPV:
		return "PersistentVolume"
	case resPVC:
		return "PersistentVolumeClaim"
	}
	return resource
}

// defaultObject does the apiserver's defaulting that the binder relies on.
func defaultObject(obj runtime.Object) {
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		if o.Spec.VolumeMode == nil {
			m := v1.PersistentVolumeFilesystem
			o.Spec.VolumeMode = &m
		}
		if o.Spec.PersistentVolumeReclaimPolicy == "" {
			o.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRetain
		}
		o.Status = v1.PersistentVolumeStatus{Phase: v1.VolumePending}
	case *v1.PersistentVolumeClaim:
		if o.Spec.VolumeMode == nil {
			m := v1.PersistentVolumeFilesystem
			o.Spec.VolumeMode = &m
		}
		o.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}
	}
}

// prepareUpdate applies the status subresource rules and PVC spec validation.
func prepareUpdate(obj, old runtime.Object, status bool) error {
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		oldPV := old.(*v1.PersistentVolume)
		if status {
			o.Spec = oldPV.Spec
			if o.Status.Phase != oldPV.Status.Phase {
				now := metav1.NewTime(time.Now())
				o.Status.LastPhaseTransitionTime = &now
			}
		} else {
			o.Status = oldPV.Status
		}
	case *v1.PersistentVolumeClaim:
		oldPVC := old.(*v1.PersistentVolumeClaim)
		if status {
			o.Spec = oldPVC.Spec
			return nil
		}
		o.Status = oldPVC.Status
		// spec.volumeName may be set once; requests may change only on a bound claim, and only grow.
		newSpec, oldSpec := o.Spec.DeepCopy(), oldPVC.Spec.DeepCopy()
		if oldSpec.VolumeName == "" {
			newSpec.VolumeName = ""
		}
		if oldPVC.Status.Phase == v1.ClaimBound && newSpec.Resources.Requests.Storage().Cmp(*oldSpec.Resources.Requests.Storage()) >= 0 {
			newSpec.Resources = oldSpec.Resources
		}
		if !apiequality.Semantic.DeepEqual(newSpec, oldSpec) {
			return fmt.Errorf("spec is immutable after creation except resources.requests for bound claims")
		}
	}
	return nil
}

// commit stores a change, records it, tells the observer and the watchers.
func (s *apiServer) commit(t watch.EventType, resource string, old, obj runtime.Object, binder bool, verb string) {
	s.rv++
	m, _ := metaOf(obj)
	m.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	if t == watch.Deleted {
		delete(s.objects[resource], key(obj))
	} else {
		s.objects[resource][key(obj)] = obj
	}
	if binder {
		s.writes[verb+" "+resource]++
		s.lastWrite = time.Now()
	} else if resource == resPV || resource == resPVC {
		s.workloadWrites++
	}
	e := event{Type: t, Resource: resource, Old: old, New: obj, RV: s.rv, At: time.Now(), Binder: binder}
	s.history = append(s.history, e)
	if s.observer != nil {
		s.observer(e)
	}
	for w := range s.watchers {
		if w.resource == resource {
			w.send(watch.Event{Type: t, Object: obj.DeepCopyObject()})
		}
	}
}

// newList makes the empty list type of each resource the model serves.
var newList = map[string]func() runtime.Object{
	resPV:    func() runtime.Object { return &v1.PersistentVolumeList{} },
	resPVC:   func() runtime.Object { return &v1.PersistentVolumeClaimList{} },
	resClass: func() runtime.Object { return &storagev1.StorageClassList{} },
	resPod:   func() runtime.Object { return &v1.PodList{} },
	resNode:  func() runtime.Object { return &v1.NodeList{} },
}

func (s *apiServer) list(resource, namespace string) (runtime.Object, error) {
	var items []runtime.Object
	for _, k := range slices.Sorted(maps.Keys(s.objects[resource])) {
		obj := s.objects[resource][k]
		if m, _ := metaOf(obj); namespace == "" || m.GetNamespace() == namespace {
			items = append(items, obj.DeepCopyObject())
		}
	}
	l := newList[resource]()
	if err := meta.SetList(l, items); err != nil {
		return nil, err
	}
	accessor, err := meta.ListAccessor(l)
	if err != nil {
		return nil, err
	}
	accessor.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	return l, nil
}

// watch opens a watch from the requested resourceVersion: the history after it is replayed first.
func (s *apiServer) watch(action core.Action, binder bool) (watch.Interface, error) {
	resource := action.GetResource().Resource
	s.mu.Lock()
	defer s.mu.Unlock()
	if binder && s.faults != nil {
		if f := s.faults.request("watch", resource, action.GetNamespace()+"/"); f.before != nil {
			return nil, f.before
		}
	}
	from := int64(0)
	if wa, ok := action.(core.WatchAction); ok {
		if rv := wa.GetWatchRestrictions().ResourceVersion; rv != "" && rv != "0" {
			from, _ = strconv.ParseInt(rv, 10, 64)
		}
	}
	if from != 0 && from < s.horizon {
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, s.horizon))
	}
	w := newWatcher(resource, binder, func(w *watcher) {
		s.mu.Lock()
		delete(s.watchers, w)
		s.mu.Unlock()
	})
	if binder {
		w.delivered = func(e watch.Event) {
			if m, ok := metaOf(e.Object); ok {
				rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
				s.mu.Lock()
				s.noteSeen(resource, rv)
				s.mu.Unlock()
			}
		}
	}
	if from != 0 {
		for _, e := range s.history {
			if e.RV > from && e.Resource == resource {
				w.send(watch.Event{Type: e.Type, Object: e.New.DeepCopyObject()})
			}
		}
	}
	s.watchers[w] = struct{}{}
	return w, nil
}

// cutWatches ends the binder's watches: plainly (the reflector watches again from its last
// resourceVersion), or with 410 Gone (it lists again).
func (s *apiServer) cutWatches(gone bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for w := range s.watchers {
		if !w.binder {
			continue
		}
		if gone {
			w.send(watch.Event{Type: watch.Error, Object: &apierrors.NewResourceExpired("the watch was answered 410 Gone by the torture").ErrStatus})
			w.drainAndClose()
		} else {
			w.close()
		}
		delete(s.watchers, w)
		n++
	}
	return n
}

// compact forgets the history: a watch from an older resourceVersion gets 410 and lists again.
func (s *apiServer) compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.horizon = s.rv
}

// snapshot returns deep copies of every PV and PVC, sorted by key.
func (s *apiServer) snapshot() ([]*v1.PersistentVolume, []*v1.PersistentVolumeClaim) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pvs []*v1.PersistentVolume
	for _, k := range slices.Sorted(maps.Keys(s.objects[resPV])) {
		pvs = append(pvs, s.objects[resPV][k].DeepCopyObject().(*v1.PersistentVolume))
	}
	var pvcs []*v1.PersistentVolumeClaim
	for _, k := range slices.Sorted(maps.Keys(s.objects[resPVC])) {
		pvcs = append(pvcs, s.objects[resPVC][k].DeepCopyObject().(*v1.PersistentVolumeClaim))
	}
	return pvs, pvcs
}

func (s *apiServer) lastBinderWrite() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastWrite
}

// watcher delivers events in order without ever blocking the store: an unbounded queue pumped
// into the result channel by its own goroutine.
type watcher struct {
	resource string
	binder   bool
	result   chan watch.Event
	mu       sync.Mutex
	queue    []watch.Event
	draining bool
	wake     chan struct{}
	done     chan struct{}
	once     sync.Once
	onStop   func(*watcher)
	// delivered is told of each event the watch's reader took (binder watches).
	delivered func(watch.Event)
}

func newWatcher(resource string, binder bool, onStop func(*watcher)) *watcher {
	w := &watcher{resource: resource, binder: binder, result: make(chan watch.Event), wake: make(chan struct{}, 1), done: make(chan struct{}), onStop: onStop}
	go w.pump()
	return w
}

func (w *watcher) send(e watch.Event) {
	w.mu.Lock()
	w.queue = append(w.queue, e)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) pump() {
	defer close(w.result)
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			draining := w.draining
			w.mu.Unlock()
			if draining {
				return
			}
			select {
			case <-w.wake:
				continue
			case <-w.done:
				return
			}
		}
		e := w.queue[0]
		w.queue = w.queue[1:]
		w.mu.Unlock()
		select {
		case w.result <- e:
			if w.delivered != nil {
				w.delivered(e)
			}
		case <-w.done:
			return
		}
	}
}

// close ends the watch at once: what is queued is lost, as on a broken connection (the
// reflector watches again from the last resourceVersion it saw, and the history replays it).
func (w *watcher) close() { w.once.Do(func() { close(w.done) }) }

// drainAndClose ends the watch once what is queued (a 410 error event) has been delivered.
func (w *watcher) drainAndClose() {
	w.mu.Lock()
	w.draining = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) Stop() {
	w.close()
	w.onStop(w)
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.result }
