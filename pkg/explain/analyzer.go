package explain

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/kubernetes/pkg/features"

	"github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume"
)

// binderEventSource is the event source of upstream's binder and ours (same code).
const binderEventSource = "persistentvolume-controller"

// Analyzer explains the claims of one snapshot. Build it once; Explain is then cheap per claim.
type Analyzer struct {
	s           *Snapshot
	volumes     map[string]*v1.PersistentVolume
	reservedFor map[string][]*v1.PersistentVolume // by claimRef namespace/name
	unclaimed   map[string][]*v1.PersistentVolume // volumes without claimRef, by class
	released    map[string][]*v1.PersistentVolume // Released or Failed volumes, by class
	classes     map[string]*storagev1.StorageClass
	classLister storagelisters.StorageClassLister
	classIndex  map[string]*persistentvolume.VolumeIndex // built on first use
	matches     map[string]*v1.PersistentVolume          // WouldBind's matches by claim shape
	pods        map[string][]*v1.Pod                     // by namespace/claim name
	events      map[string][]*v1.Event                   // claim events by namespace/name, newest first
	nodes       map[string]*v1.Node
	binder      Binder
	vacEnabled  bool
	// MaxCandidates is how many rejected volumes a report lists.
	MaxCandidates int
}

// NewAnalyzer indexes a snapshot.
func NewAnalyzer(s *Snapshot) *Analyzer {
	a := &Analyzer{
		s:             s,
		volumes:       make(map[string]*v1.PersistentVolume, len(s.Volumes)),
		reservedFor:   map[string][]*v1.PersistentVolume{},
		unclaimed:     map[string][]*v1.PersistentVolume{},
		released:      map[string][]*v1.PersistentVolume{},
		classes:       map[string]*storagev1.StorageClass{},
		classIndex:    map[string]*persistentvolume.VolumeIndex{},
		matches:       map[string]*v1.PersistentVolume{},
		pods:          map[string][]*v1.Pod{},
		events:        map[string][]*v1.Event{},
		nodes:         map[string]*v1.Node{},
		vacEnabled:    utilfeature.DefaultFeatureGate.Enabled(features.VolumeAttributesClass),
		MaxCandidates: 5,
	}
	for _, pv := range s.Volumes {
		a.volumes[pv.Name] = pv
		if ref := pv.Spec.ClaimRef; ref != nil {
			key := ref.Namespace + "/" + ref.Name
			a.reservedFor[key] = append(a.reservedFor[key], pv)
			if pv.Status.Phase == v1.VolumeReleased || pv.Status.Phase == v1.VolumeFailed {
				class := storagehelpers.GetPersistentVolumeClass(pv)
				a.released[class] = append(a.released[class], pv)
			}
		} else {
			class := storagehelpers.GetPersistentVolumeClass(pv)
			a.unclaimed[class] = append(a.unclaimed[class], pv)
		}
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, sc := range s.Classes {
		a.classes[sc.Name] = sc
		_ = indexer.Add(sc)
	}
	a.classLister = storagelisters.NewStorageClassLister(indexer)
	for _, pod := range s.Pods {
		for _, vol := range pod.Spec.Volumes {
			if vol.PersistentVolumeClaim != nil {
				key := pod.Namespace + "/" + vol.PersistentVolumeClaim.ClaimName
				a.pods[key] = append(a.pods[key], pod)
			}
		}
	}
	for _, e := range s.Events {
		if e.InvolvedObject.Kind != "PersistentVolumeClaim" {
			continue
		}
		key := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
		a.events[key] = append(a.events[key], e)
	}
	for _, list := range a.events {
		sort.SliceStable(list, func(i, j int) bool { return eventTime(list[i]).After(eventTime(list[j])) })
	}
	for _, n := range s.Nodes {
		a.nodes[n.Name] = n
	}
	a.binder = binderStatus(s)
	return a
}

// ExplainAll explains every claim of the snapshot, or only those not OK when onlyProblems.
func (a *Analyzer) ExplainAll(onlyProblems bool) []*Report {
	claims := append([]*v1.PersistentVolumeClaim(nil), a.s.Claims...)
	sort.Slice(claims, func(i, j int) bool {
		if claims[i].Namespace != claims[j].Namespace {
			return claims[i].Namespace < claims[j].Namespace
		}
		return claims[i].Name < claims[j].Name
	})
	var reports []*Report
	for _, claim := range claims {
		r := a.Explain(claim)
		if onlyProblems && r.OK {
			continue
		}
		reports = append(reports, r)
	}
	return reports
}

// Claim returns the snapshot's claim namespace/name, or nil.
func (a *Analyzer) Claim(namespace, name string) *v1.PersistentVolumeClaim {
	for _, c := range a.s.Claims {
		if c.Namespace == namespace && c.Name == name {
			return c
		}
	}
	return nil
}

// Explain gives the verdict for one claim.
func (a *Analyzer) Explain(claim *v1.PersistentVolumeClaim) *Report {
	r := &Report{Namespace: claim.Namespace, Name: claim.Name, Phase: string(claim.Status.Phase), Binder: a.binder}
	if r.Phase == "" {
		r.Phase = string(v1.ClaimPending)
	}
	r.Events = a.claimEvents(claim, 5)
	for i := range r.Events {
		if r.Events[i].Source == binderEventSource {
			e := r.Events[i]
			r.Binder.LastEvent = &e
			break
		}
	}
	r.Details = append(r.Details, a.describeClaim(claim))
	a.explainBinding(claim, r)
	r.Details = append(r.Details, a.nodeAffinityProblems(claim, a.volumes[r.Volume])...)
	if claim.DeletionTimestamp != nil {
		users := podNames(a.podsUsing(claim))
		r.Verdict, r.OK = Terminating, false
		r.Summary = fmt.Sprintf("being deleted since %s; ", a.ago(claim.DeletionTimestamp.Time))
		if len(users) > 0 {
			r.Summary += fmt.Sprintf("kept by the pvc-protection finalizer while pods %s use it", strings.Join(users, ", "))
		} else {
			r.Summary += "no pod uses it, so its finalizers should go soon"
		}
	}
	if r.Verdict == Bound {
		r.Resize = a.explainResize(claim, a.volumes[claim.Spec.VolumeName])
		r.OK = r.Resize.State == ResizeNone
	}
	return r
}
