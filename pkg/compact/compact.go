package compact

import (
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxShared bounds each table of shared parts.
const maxShared = 4096

// maxKeyBytes: maps whose content is longer are not shared (such values, a last-applied
// configuration for example, are seldom held alike and would cost a long key per event).
const maxKeyBytes = 512

// Sharer holds the parts shared among the objects it has compacted. Its Transform is safe for
// concurrent use by several informers.
type Sharer struct {
	mu          sync.Mutex
	stringMaps  table[map[string]string]
	resources   table[v1.ResourceList]
	accessModes table[[]v1.PersistentVolumeAccessMode]
	stringLists table[[]string]
	texts       table[string]
	strings     table[*string]
	volumeModes table[*v1.PersistentVolumeMode]
	hostPaths   table[*v1.HostPathType]
}

// New returns an empty Sharer.
func New() *Sharer { return &Sharer{} }

// Transform is a cache.TransformFunc: it drops managedFields from any object and compacts volumes
// and claims in place. It returns the object it was given.
func (s *Sharer) Transform(obj interface{}) (interface{}, error) {
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		s.mu.Lock()
		s.volume(o)
		s.mu.Unlock()
	case *v1.PersistentVolumeClaim:
		s.mu.Lock()
		s.claim(o)
		s.mu.Unlock()
	default:
		if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
			accessor.SetManagedFields(nil)
		}
	}
	return obj, nil
}

func (s *Sharer) volume(pv *v1.PersistentVolume) {
	s.objectMeta(&pv.ObjectMeta)
	spec := &pv.Spec
	setMap(&spec.Capacity, s.resourceList(spec.Capacity))
	setSlice(&spec.AccessModes, s.modes(spec.AccessModes))
	setSlice(&spec.MountOptions, s.stringList(spec.MountOptions))
	setString(&spec.StorageClassName, internIn(&s.texts, spec.StorageClassName))
	setString(&spec.PersistentVolumeReclaimPolicy, internIn(&s.texts, spec.PersistentVolumeReclaimPolicy))
	setPointer(&spec.VolumeMode, sharePointer(&s.volumeModes, spec.VolumeMode))
	setPointer(&spec.VolumeAttributesClassName, sharePointer(&s.strings, spec.VolumeAttributesClassName))
	if ref := spec.ClaimRef; ref != nil {
		setString(&ref.Kind, internIn(&s.texts, ref.Kind))
		setString(&ref.APIVersion, internIn(&s.texts, ref.APIVersion))
		setString(&ref.Namespace, internIn(&s.texts, ref.Namespace))
	}
	if hostPath := spec.HostPath; hostPath != nil {
		setPointer(&hostPath.Type, sharePointer(&s.hostPaths, hostPath.Type))
	}
	if csi := spec.CSI; csi != nil {
		setString(&csi.Driver, internIn(&s.texts, csi.Driver))
		setString(&csi.FSType, internIn(&s.texts, csi.FSType))
		setMap(&csi.VolumeAttributes, s.stringMap(csi.VolumeAttributes))
	}
	if local := spec.Local; local != nil {
		setPointer(&local.FSType, sharePointer(&s.strings, local.FSType))
	}
	if affinity := spec.NodeAffinity; affinity != nil && affinity.Required != nil {
		for i := range affinity.Required.NodeSelectorTerms {
			term := &affinity.Required.NodeSelectorTerms[i]
			for _, requirements := range [][]v1.NodeSelectorRequirement{term.MatchExpressions, term.MatchFields} {
				for j := range requirements {
					r := &requirements[j]
					setString(&r.Key, internIn(&s.texts, r.Key))
					setString(&r.Operator, internIn(&s.texts, r.Operator))
					setSlice(&r.Values, s.stringList(r.Values))
				}
			}
		}
	}
	setString(&pv.Status.Phase, internIn(&s.texts, pv.Status.Phase))
}

func (s *Sharer) claim(pvc *v1.PersistentVolumeClaim) {
	s.objectMeta(&pvc.ObjectMeta)
	spec := &pvc.Spec
	setSlice(&spec.AccessModes, s.modes(spec.AccessModes))
	setMap(&spec.Resources.Requests, s.resourceList(spec.Resources.Requests))
	setMap(&spec.Resources.Limits, s.resourceList(spec.Resources.Limits))
	setPointer(&spec.StorageClassName, sharePointer(&s.strings, spec.StorageClassName))
	setPointer(&spec.VolumeMode, sharePointer(&s.volumeModes, spec.VolumeMode))
	setPointer(&spec.VolumeAttributesClassName, sharePointer(&s.strings, spec.VolumeAttributesClassName))
	status := &pvc.Status
	setString(&status.Phase, internIn(&s.texts, status.Phase))
	setSlice(&status.AccessModes, s.modes(status.AccessModes))
	setMap(&status.Capacity, s.resourceList(status.Capacity))
	setMap(&status.AllocatedResources, s.resourceList(status.AllocatedResources))
}

func (s *Sharer) objectMeta(m *metav1.ObjectMeta) {
	if m.ManagedFields != nil {
		m.ManagedFields = nil
	}
	setString(&m.Namespace, internIn(&s.texts, m.Namespace))
	setMap(&m.Labels, s.stringMap(m.Labels))
	setMap(&m.Annotations, s.stringMap(m.Annotations))
	setSlice(&m.Finalizers, s.stringList(m.Finalizers))
}

func (s *Sharer) stringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	keys := slices.Sorted(maps.Keys(m))
	var b strings.Builder
	for _, k := range keys {
		if b.Len()+len(k)+len(m[k]) > maxKeyBytes {
			return m
		}
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(m[k])
		b.WriteByte(0)
	}
	return s.stringMaps.share(b.String(), m, maps.Equal[map[string]string])
}

func (s *Sharer) resourceList(list v1.ResourceList) v1.ResourceList {
	if len(list) == 0 {
		return list
	}
	names := make([]string, 0, len(list))
	for name := range list {
		names = append(names, string(name))
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		q := list[v1.ResourceName(name)]
		b.WriteString(name)
		b.WriteByte(0)
		b.WriteString(q.String())
		b.WriteByte(0)
		b.WriteString(string(q.Format))
		b.WriteByte(0)
	}
	return s.resources.share(b.String(), list, func(a, b v1.ResourceList) bool { return reflect.DeepEqual(a, b) })
}

func (s *Sharer) modes(modes []v1.PersistentVolumeAccessMode) []v1.PersistentVolumeAccessMode {
	if len(modes) == 0 {
		return modes
	}
	var b strings.Builder
	for _, m := range modes {
		b.WriteString(string(m))
		b.WriteByte(0)
	}
	return s.accessModes.share(b.String(), slices.Clip(modes), slices.Equal[[]v1.PersistentVolumeAccessMode])
}

func (s *Sharer) stringList(list []string) []string {
	if len(list) == 0 {
		return list
	}
	var b strings.Builder
	for _, v := range list {
		if b.Len()+len(v) > maxKeyBytes {
			return list
		}
		b.WriteString(v)
		b.WriteByte(0)
	}
	return s.stringLists.share(b.String(), slices.Clip(list), slices.Equal[[]string])
}

// sharePointer returns the pointer the table holds to a value equal to *p, if there is one.
func sharePointer[T ~string](t *table[*T], p *T) *T {
	if p == nil || len(*p) > maxKeyBytes {
		return p
	}
	return t.share(string(*p), p, func(a, b *T) bool { return *a == *b })
}

// table holds at most maxShared shared values by a key of their content. A full table starts
// over: values already shared stay shared by the objects that hold them, and what is common among
// the objects that come after is shared again, so a run of values seen once cannot hold the table.
type table[T any] struct {
	byKey map[string]T
}

// share returns the value shared for key if it equals own, else own (remembered as the shared
// value for key).
func (t *table[T]) share(key string, own T, equal func(a, b T) bool) T {
	if shared, ok := t.byKey[key]; ok {
		if equal(shared, own) {
			return shared
		}
		return own
	}
	if t.byKey == nil || len(t.byKey) >= maxShared {
		t.byKey = make(map[string]T, 64)
	}
	t.byKey[key] = own
	return own
}

// internIn returns the copy of v that the table of strings holds, if there is one.
func internIn[S ~string](t *table[string], v S) S {
	if v == "" || len(v) > maxKeyBytes {
		return v
	}
	return S(t.share(string(v), string(v), func(a, b string) bool { return a == b }))
}
