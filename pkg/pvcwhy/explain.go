package pvcwhy

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/utils/ptr"

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

func (a *Analyzer) explainBinding(claim *v1.PersistentVolumeClaim, r *Report) {
	if claim.Status.Phase == v1.ClaimLost {
		r.Verdict, r.Volume = Lost, claim.Spec.VolumeName
		pv := a.volumes[claim.Spec.VolumeName]
		switch {
		case pv == nil:
			r.Summary = fmt.Sprintf("Lost: its volume %q was deleted; the data is gone unless a PV of that name is re-created with claimRef uid %s", claim.Spec.VolumeName, claim.UID)
		default:
			r.Summary = fmt.Sprintf("Lost: its volume %q now belongs to %s", pv.Name, claimRefString(pv.Spec.ClaimRef))
		}
		return
	}
	if metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBindCompleted) {
		pv := a.volumes[claim.Spec.VolumeName]
		switch {
		case pv == nil:
			r.Verdict, r.Volume = Lost, claim.Spec.VolumeName
			r.Summary = fmt.Sprintf("bound to volume %q, which no longer exists: the binder will mark the claim Lost", claim.Spec.VolumeName)
		case pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID:
			r.Verdict, r.Volume = Lost, pv.Name
			r.Summary = fmt.Sprintf("bound to volume %q, which now belongs to %s: the binder will mark the claim Lost", pv.Name, claimRefString(pv.Spec.ClaimRef))
		default:
			r.Verdict, r.Volume = Bound, pv.Name
			r.Summary = fmt.Sprintf("Bound to %s", a.describeBoundVolume(claim, pv))
			if claim.Status.Phase != v1.ClaimBound {
				r.Verdict = BindPending
				r.Summary = fmt.Sprintf("bound to volume %q, but its status still says %s: the binder's last write (claim status) is pending", pv.Name, r.Phase)
			}
		}
		return
	}

	if claim.Spec.VolumeName != "" {
		a.explainPrebound(claim, r)
		return
	}

	// Reservations first: a volume whose claimRef names this claim is what the binder binds,
	// whatever the class (kube-scheduler, external-provisioner and operators write these).
	reserved := a.reserved(claim)
	delayBinding, err := storagehelpers.IsDelayBindingMode(claim, a.classLister)
	if err != nil {
		r.Details = append(r.Details, fmt.Sprintf("class: %v", err))
	}
	best, err := a.bestMatch(claim, reserved, delayBinding)
	if err != nil {
		r.Verdict = NoMatch
		r.Summary = fmt.Sprintf("the binder cannot match it: %v", err)
		return
	}
	if best != nil {
		r.Verdict, r.Volume = BindPending, best.Name
		how := "the smallest Available volume that fits"
		if storagehelpers.IsVolumeBoundToClaim(best, claim) {
			how = "reserved for it by the volume's claimRef"
		}
		r.Summary = fmt.Sprintf("the binder would bind it to %q (%s) but has not yet%s", best.Name, how, a.binderHint())
		return
	}
	if len(reserved) > 0 {
		pv := reserved[0]
		r.Verdict, r.Volume = ReservedVolumeMismatch, pv.Name
		reasons := a.rejections(claim, pv)
		r.Summary = fmt.Sprintf("volume %q reserves this claim by claimRef but does not fit it: %s", pv.Name, strings.Join(reasons, "; "))
		r.Candidates = append(r.Candidates, a.candidate(claim, pv, reasons))
		return
	}

	className := storagehelpers.GetPersistentVolumeClaimClass(claim)
	class := a.classes[className]
	if delayBinding && !storagehelpers.IsDelayBindingProvisioning(claim) {
		a.explainWaitForConsumer(claim, r)
		return
	}
	provisioner := claim.Annotations[storagehelpers.AnnStorageProvisioner]
	if provisioner == "" {
		provisioner = claim.Annotations[storagehelpers.AnnBetaStorageProvisioner]
	}
	if provisioner == "" && class != nil {
		provisioner = class.Provisioner
	}
	r.Candidates = a.nearestCandidates(claim)
	switch {
	case className != "" && class == nil && a.s.Classes != nil:
		r.Verdict = NoMatch
		r.Summary = fmt.Sprintf("no PV of class %q fits, and StorageClass %q does not exist, so nothing provisions one", className, className)
	case className != "" && provisioner != "" && provisioner != storagehelpers.NotSupportedProvisioner:
		a.explainProvisioning(claim, provisioner, r)
		r.Candidates = sameClass(r.Candidates, className) // other classes are no hint here
	case className == "":
		r.Verdict = NoMatch
		r.Summary = "no PV without a storage class fits it, and no storage class is set, so nothing provisions one"
	default:
		r.Verdict = NoMatch
		r.Summary = fmt.Sprintf("no PV of class %q fits it, and the class provisions nothing (%s)", className, storagehelpers.NotSupportedProvisioner)
	}
	if len(r.Candidates) == 0 && r.Verdict == NoMatch {
		r.Summary += "; there is no unclaimed PV at all in that class"
	}
}

// explainPrebound follows syncUnboundClaim's branch for a claim with spec.volumeName.
func (a *Analyzer) explainPrebound(claim *v1.PersistentVolumeClaim, r *Report) {
	r.Volume = claim.Spec.VolumeName
	pv := a.volumes[claim.Spec.VolumeName]
	switch {
	case pv == nil:
		r.Verdict = PreboundVolumeMissing
		r.Summary = fmt.Sprintf("pre-bound by spec.volumeName to PV %q, which does not exist: it binds as soon as that PV is created", claim.Spec.VolumeName)
	case pv.Spec.ClaimRef == nil:
		reasons := prebindMismatches(claim, pv)
		binderErr := persistentvolume.CheckVolumeSatisfyClaim(pv, claim)
		if binderErr != nil {
			if len(reasons) == 0 {
				reasons = append(reasons, binderErr.Error())
			}
			r.Verdict = PreboundVolumeMismatch
			r.Summary = fmt.Sprintf("pre-bound by spec.volumeName to PV %q, which does not fit: %s", pv.Name, strings.Join(reasons, "; "))
			r.Candidates = append(r.Candidates, a.candidate(claim, pv, reasons))
			r.Details = append(r.Details, fmt.Sprintf("binder: %q (checkVolumeSatisfyClaim)", binderErr.Error()))
			return
		}
		r.Verdict = BindPending
		r.Summary = fmt.Sprintf("pre-bound to PV %q, which fits and is unclaimed: the binder binds them on its next look%s", pv.Name, a.binderHint())
	case storagehelpers.IsVolumeBoundToClaim(pv, claim):
		r.Verdict = BindPending
		r.Summary = fmt.Sprintf("PV %q and the claim name each other: the binder completes the bind on its next look%s", pv.Name, a.binderHint())
	default:
		ref := pv.Spec.ClaimRef
		if ref.Namespace == claim.Namespace && ref.Name == claim.Name {
			// Same name, other UID: an earlier claim of this name used the volume.
			r.Verdict = VolumeReleased
			r.Summary = fmt.Sprintf("PV %q still belongs to an earlier claim of this name (uid %s), phase %s, reclaim policy %s: an operator must clear its spec.claimRef (or claimRef.uid) to hand it to this claim",
				pv.Name, ref.UID, pv.Status.Phase, pv.Spec.PersistentVolumeReclaimPolicy)
			if pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimDelete {
				r.Summary = fmt.Sprintf("PV %q still belongs to an earlier claim of this name (uid %s) and will be deleted (reclaim policy Delete): this claim will not get it", pv.Name, ref.UID)
			}
			return
		}
		r.Verdict = PreboundVolumeTaken
		r.Summary = fmt.Sprintf("pre-bound to PV %q, which is bound to another claim, %s", pv.Name, claimRefString(ref))
	}
}

func (a *Analyzer) explainWaitForConsumer(claim *v1.PersistentVolumeClaim, r *Report) {
	pods := a.podsUsing(claim)
	if len(pods) == 0 {
		r.Verdict = WaitForFirstConsumer
		r.Summary = fmt.Sprintf("class %q binds at first use (WaitForFirstConsumer) and no pod uses the claim yet", storagehelpers.GetPersistentVolumeClaimClass(claim))
		return
	}
	var unscheduled []string
	for _, pod := range pods {
		if pod.Spec.NodeName == "" {
			msg := pod.Name
			for _, c := range pod.Status.Conditions {
				if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Message != "" {
					msg += fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
				}
			}
			unscheduled = append(unscheduled, msg)
		}
	}
	if len(unscheduled) == len(pods) {
		r.Verdict = WaitForPodScheduled
		r.Summary = fmt.Sprintf("class binds at first use; waiting for kube-scheduler to place pod %s and reserve a PV for the claim on that node", strings.Join(unscheduled, ", "))
		return
	}
	r.Verdict = WaitForScheduler
	r.Summary = fmt.Sprintf("pod %s is placed on node %q but no PV is reserved for the claim: kube-scheduler writes the chosen PV's claimRef (or asks for provisioning) before it binds the pod; the binder then completes the bind",
		pods[0].Name, pods[0].Spec.NodeName)
}

func (a *Analyzer) explainProvisioning(claim *v1.PersistentVolumeClaim, provisioner string, r *Report) {
	where := ""
	if node := claim.Annotations[storagehelpers.AnnSelectedNode]; node != "" {
		where = fmt.Sprintf(" on node %q (chosen by kube-scheduler)", node)
	}
	// The provisioner's own word: the binder repeats ExternalProvisioning ("waiting for ...") on
	// every sync, so that event says only that the claim was handed over.
	var lastProvisioning, handedOver *EventSummary
	for _, e := range a.claimEvents(claim, 0) {
		switch e.Reason {
		case "ProvisioningFailed", "ProvisioningSucceeded", "Provisioning":
			if lastProvisioning == nil {
				lastProvisioning = &e
			}
		case "ExternalProvisioning":
			if handedOver == nil {
				handedOver = &e
			}
		}
	}
	if !metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnStorageProvisioner) && !metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBetaStorageProvisioner) {
		r.Verdict = Provisioning
		r.Summary = fmt.Sprintf("no PV fits; the binder has not yet handed the claim to provisioner %q (no %s annotation)%s", provisioner, storagehelpers.AnnStorageProvisioner, a.binderHint())
		return
	}
	if lastProvisioning != nil && lastProvisioning.Reason == "ProvisioningFailed" {
		r.Verdict = ProvisioningFailed
		r.Summary = fmt.Sprintf("provisioner %q failed to create a volume%s, %s: %s", provisioner, where, a.ago(lastProvisioning.Time), lastProvisioning.Message)
		return
	}
	r.Verdict = Provisioning
	r.Summary = fmt.Sprintf("waiting for provisioner %q to create a volume%s", provisioner, where)
	switch {
	case lastProvisioning != nil:
		r.Summary += fmt.Sprintf(" (its last word, %s: %s)", a.ago(lastProvisioning.Time), lastProvisioning.Message)
	case handedOver != nil:
		r.Summary += fmt.Sprintf("; the binder handed the claim over %s and the provisioner has said nothing since: is it running?", a.ago(handedOver.Time))
	default:
		r.Summary += "; no event from it yet: is it running?"
	}
}

// reserved returns the volumes whose claimRef names this claim (by name, and UID when set).
func (a *Analyzer) reserved(claim *v1.PersistentVolumeClaim) []*v1.PersistentVolume {
	var out []*v1.PersistentVolume
	for _, pv := range a.reservedFor[claim.Namespace+"/"+claim.Name] {
		if storagehelpers.IsVolumeBoundToClaim(pv, claim) {
			out = append(out, pv)
		}
	}
	return out
}

// bestMatch asks the controller's own index which volume syncUnboundClaim would bind. The
// index holds the unclaimed volumes of the claim's class plus those reserved for the claim:
// every other volume is skipped by the binder whatever the claim (claimed by another, or of
// another class), so the answer is the one over all volumes.
func (a *Analyzer) bestMatch(claim *v1.PersistentVolumeClaim, reserved []*v1.PersistentVolume, delayBinding bool) (*v1.PersistentVolume, error) {
	class := storagehelpers.GetPersistentVolumeClaimClass(claim)
	var index *persistentvolume.VolumeIndex
	var err error
	if len(reserved) > 0 {
		index, err = persistentvolume.NewVolumeIndex(append(append([]*v1.PersistentVolume(nil), a.unclaimed[class]...), reserved...))
	} else if index = a.classIndex[class]; index == nil {
		index, err = persistentvolume.NewVolumeIndex(a.unclaimed[class])
		a.classIndex[class] = index
	}
	if err != nil {
		return nil, err
	}
	return index.FindBestMatch(claim, delayBinding)
}

// binderAccepts asks the controller's index whether it would bind the claim to this volume
// alone (the matching path, not WaitForFirstConsumer).
func binderAccepts(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) bool {
	index, err := persistentvolume.NewVolumeIndex([]*v1.PersistentVolume{pv})
	if err != nil {
		return false
	}
	best, err := index.FindBestMatch(claim, false)
	return err == nil && best != nil
}

// rejection is one reason the binder does not bind a claim to a volume; a set of them is
// computed without formatting, so thousands of candidates cost little, and put in words only
// for the volumes a report shows.
type rejection uint16

const (
	rejClaimed rejection = 1 << iota
	rejCapacity
	rejVolumeMode
	rejVAC
	rejVACDisabled
	rejDeleting
	rejAccessModes
	rejPhase
	rejSelector
	rejSelectorInvalid
	rejClass
)

// matchRejections is the set of reasons the matching path (FindMatchingVolume behind the
// controller's access-mode index) skips a volume for a claim, in the order the binder checks.
func (a *Analyzer) matchRejections(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, selector labels.Selector, selectorErr error) rejection {
	var set rejection
	reserved := storagehelpers.IsVolumeBoundToClaim(pv, claim)
	if pv.Spec.ClaimRef != nil && !reserved {
		set |= rejClaimed
	}
	set |= fitRejections(claim, pv, a.vacEnabled)
	if pv.DeletionTimestamp != nil {
		set |= rejDeleting
	}
	// The index lists only volumes with every requested access mode, reserved or not.
	if !hasAccessModes(claim, pv) {
		set |= rejAccessModes
	}
	if reserved {
		return set // a reserved volume is not checked further
	}
	if pv.Status.Phase != v1.VolumeAvailable {
		set |= rejPhase
	}
	if selectorErr != nil {
		set |= rejSelectorInvalid
	} else if selector != nil && !selector.Matches(labels.Set(pv.Labels)) {
		set |= rejSelector
	}
	if storagehelpers.GetPersistentVolumeClass(pv) != storagehelpers.GetPersistentVolumeClaimClass(claim) {
		set |= rejClass
	}
	return set
}

// rejections lists in words every reason the matching path skips a volume for a claim.
func (a *Analyzer) rejections(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) []string {
	selector, err := claimSelector(claim)
	return describeRejections(a.matchRejections(claim, pv, selector, err), claim, pv, selector, err)
}

// fitRejections are the checks both paths make: size, volume mode, attributes class.
func fitRejections(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, vacEnabled bool) rejection {
	var set rejection
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	if capacity.Cmp(requested) < 0 {
		set |= rejCapacity
	}
	if storagehelpers.CheckVolumeModeMismatches(&claim.Spec, &pv.Spec) {
		set |= rejVolumeMode
	}
	claimVAC, volumeVAC := ptr.Deref(claim.Spec.VolumeAttributesClassName, ""), ptr.Deref(pv.Spec.VolumeAttributesClassName, "")
	if vacEnabled && claimVAC != volumeVAC {
		set |= rejVAC
	}
	if !vacEnabled && (claimVAC != "" || volumeVAC != "") {
		set |= rejVACDisabled
	}
	return set
}

// prebindMismatches lists every reason checkVolumeSatisfyClaim refuses a claim's pre-bound
// volume (it stops at the first).
func prebindMismatches(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) []string {
	set := fitRejections(claim, pv, utilfeature.DefaultFeatureGate.Enabled(features.VolumeAttributesClass))
	if pv.DeletionTimestamp != nil {
		set |= rejDeleting
	}
	if storagehelpers.GetPersistentVolumeClass(pv) != storagehelpers.GetPersistentVolumeClaimClass(claim) {
		set |= rejClass
	}
	if !hasAccessModes(claim, pv) {
		set |= rejAccessModes
	}
	return describeRejections(set, claim, pv, nil, nil)
}

func describeRejections(set rejection, claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, selector labels.Selector, selectorErr error) []string {
	var reasons []string
	if set&rejClaimed != 0 {
		reasons = append(reasons, "claimed by "+claimRefString(pv.Spec.ClaimRef))
	}
	if set&rejCapacity != 0 {
		requested, capacity := claim.Spec.Resources.Requests[v1.ResourceStorage], pv.Spec.Capacity[v1.ResourceStorage]
		reasons = append(reasons, fmt.Sprintf("capacity %s is less than the requested %s", capacity.String(), requested.String()))
	}
	if set&rejVolumeMode != 0 {
		reasons = append(reasons, fmt.Sprintf("volumeMode %s, the claim asks for %s", volumeMode(pv.Spec.VolumeMode), volumeMode(claim.Spec.VolumeMode)))
	}
	if set&rejVAC != 0 {
		reasons = append(reasons, fmt.Sprintf("volumeAttributesClassName %q, the claim asks for %q", ptr.Deref(pv.Spec.VolumeAttributesClassName, ""), ptr.Deref(claim.Spec.VolumeAttributesClassName, "")))
	}
	if set&rejVACDisabled != 0 {
		reasons = append(reasons, "volumeAttributesClassName is set and the VolumeAttributesClass feature is off")
	}
	if set&rejDeleting != 0 {
		reasons = append(reasons, "being deleted")
	}
	if set&rejAccessModes != 0 {
		reasons = append(reasons, fmt.Sprintf("accessModes %s lack %s", modesString(pv.Spec.AccessModes), modesString(missingAccessModes(claim, pv))))
	}
	if set&rejPhase != 0 {
		phase := string(pv.Status.Phase)
		if phase == "" {
			phase = "not yet set"
		}
		reasons = append(reasons, fmt.Sprintf("phase %s (only Available volumes are matched)", phase))
	}
	if set&rejSelectorInvalid != 0 {
		reasons = append(reasons, fmt.Sprintf("the claim's selector is invalid: %v", selectorErr))
	}
	if set&rejSelector != 0 {
		reasons = append(reasons, fmt.Sprintf("labels %s do not match the claim's selector %s", labelString(pv.Labels), selector))
	}
	if set&rejClass != 0 {
		reasons = append(reasons, fmt.Sprintf("storageClassName %q, the claim asks for %q", storagehelpers.GetPersistentVolumeClass(pv), storagehelpers.GetPersistentVolumeClaimClass(claim)))
	}
	return reasons
}

func claimSelector(claim *v1.PersistentVolumeClaim) (labels.Selector, error) {
	if claim.Spec.Selector == nil {
		return nil, nil
	}
	return metav1.LabelSelectorAsSelector(claim.Spec.Selector)
}

// nearestCandidates ranks the volumes the claim could have had: unclaimed ones of its class
// first, then of other classes; fewest reasons, then closest size. Each candidate's verdict is
// checked against the binder's own (binderAccepts).
func (a *Analyzer) nearestCandidates(claim *v1.PersistentVolumeClaim) []Candidate {
	if a.MaxCandidates <= 0 {
		return nil
	}
	type ranked struct {
		pv    *v1.PersistentVolume
		set   rejection
		other bool
		dist  int64
	}
	selector, selectorErr := claimSelector(claim)
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	var all []ranked
	consider := func(pv *v1.PersistentVolume, other bool) {
		capacity := pv.Spec.Capacity[v1.ResourceStorage]
		d := capacity.Value() - requested.Value()
		if d < 0 {
			d = -d
		}
		all = append(all, ranked{pv, a.matchRejections(claim, pv, selector, selectorErr), other, d})
	}
	class := storagehelpers.GetPersistentVolumeClaimClass(claim)
	for _, pv := range a.unclaimed[class] {
		consider(pv, false)
	}
	for _, pv := range a.released[class] {
		consider(pv, false) // an operator can hand it over
	}
	if len(all) < a.MaxCandidates {
		for c, pvs := range a.unclaimed {
			if c == class {
				continue
			}
			for _, pv := range pvs {
				consider(pv, true)
			}
		}
	}
	sort.Slice(all, func(i, j int) bool {
		x, y := all[i], all[j]
		if x.other != y.other {
			return !x.other
		}
		if nx, ny := bits.OnesCount16(uint16(x.set)), bits.OnesCount16(uint16(y.set)); nx != ny {
			return nx < ny
		}
		if x.dist != y.dist {
			return x.dist < y.dist
		}
		return x.pv.Name < y.pv.Name
	})
	if len(all) > a.MaxCandidates {
		all = all[:a.MaxCandidates]
	}
	out := make([]Candidate, 0, len(all))
	for _, c := range all {
		out = append(out, a.candidate(claim, c.pv, describeRejections(c.set, claim, c.pv, selector, selectorErr)))
	}
	return out
}

func (a *Analyzer) candidate(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, reasons []string) Candidate {
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	c := Candidate{Name: pv.Name, StorageClass: storagehelpers.GetPersistentVolumeClass(pv), Capacity: capacity.String(), Phase: string(pv.Status.Phase), Reasons: reasons}
	if claim.Spec.VolumeName == "" && !storagehelpers.IsVolumeBoundToClaim(pv, claim) && (len(reasons) == 0) != binderAccepts(claim, pv) {
		c.Reasons = append(c.Reasons, "pvc-why's reasons disagree with the binder's own matching for this volume: please report it")
	}
	return c
}

// nodeAffinityProblems says when the claim's volume cannot be used where its pods are (or will
// be) placed. The binder does not check node affinity; kube-scheduler and kubelet do, so a claim
// can be Bound to a volume its pod never reaches.
func (a *Analyzer) nodeAffinityProblems(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) []string {
	if pv == nil || pv.Spec.NodeAffinity == nil || len(a.nodes) == 0 {
		return nil
	}
	var problems []string
	placed := map[string]string{} // node -> who placed the claim there
	if node := claim.Annotations[storagehelpers.AnnSelectedNode]; node != "" {
		placed[node] = "kube-scheduler's selected-node"
	}
	pods := a.podsUsing(claim)
	for _, pod := range pods {
		if pod.Spec.NodeName != "" {
			placed[pod.Spec.NodeName] = "pod " + pod.Name
		}
	}
	for node, who := range placed {
		if n := a.nodes[node]; n != nil {
			if err := storagehelpers.CheckNodeAffinity(pv, n.Labels); err != nil {
				problems = append(problems, fmt.Sprintf("node affinity: PV %q cannot be used on node %q (%s): %v", pv.Name, node, who, err))
			}
		}
	}
	if len(placed) == 0 && len(pods) > 0 {
		fits := 0
		for _, n := range a.nodes {
			if storagehelpers.CheckNodeAffinity(pv, n.Labels) == nil {
				fits++
			}
		}
		if fits == 0 {
			problems = append(problems, fmt.Sprintf("node affinity: no node satisfies PV %q's node affinity, so pods using the claim cannot be scheduled", pv.Name))
		}
	}
	sort.Strings(problems)
	return problems
}

func sameClass(candidates []Candidate, class string) []Candidate {
	var out []Candidate
	for _, c := range candidates {
		if c.StorageClass == class {
			out = append(out, c)
		}
	}
	return out
}

func (a *Analyzer) podsUsing(claim *v1.PersistentVolumeClaim) []*v1.Pod {
	var out []*v1.Pod
	for _, pod := range a.pods[claim.Namespace+"/"+claim.Name] {
		if pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed {
			out = append(out, pod)
		}
	}
	return out
}

// claimEvents returns the claim's newest events (of this claim, not an earlier one of the name).
func (a *Analyzer) claimEvents(claim *v1.PersistentVolumeClaim, max int) []EventSummary {
	var out []EventSummary
	for _, e := range a.events[claim.Namespace+"/"+claim.Name] {
		if e.InvolvedObject.UID != "" && claim.UID != "" && e.InvolvedObject.UID != claim.UID {
			continue
		}
		source := e.Source.Component
		if source == "" {
			source = e.ReportingController
		}
		out = append(out, EventSummary{Type: e.Type, Reason: e.Reason, Message: e.Message, Source: source, Count: e.Count, Time: eventTime(e)})
		if len(out) == max { // max 0: all
			break
		}
	}
	return out
}

func (a *Analyzer) describeClaim(claim *v1.PersistentVolumeClaim) string {
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	class := storagehelpers.GetPersistentVolumeClaimClass(claim)
	s := fmt.Sprintf("claim: class %q, requests %s, accessModes %s, volumeMode %s", class, requested.String(), modesString(claim.Spec.AccessModes), volumeMode(claim.Spec.VolumeMode))
	if claim.Spec.Selector != nil {
		if sel, err := metav1.LabelSelectorAsSelector(claim.Spec.Selector); err == nil {
			s += ", selector " + sel.String()
		}
	}
	if claim.Spec.VolumeName != "" {
		s += fmt.Sprintf(", spec.volumeName %q", claim.Spec.VolumeName)
	}
	return s + fmt.Sprintf(", created %s", a.ago(claim.CreationTimestamp.Time))
}

func (a *Analyzer) describeBoundVolume(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) string {
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	s := fmt.Sprintf("%q (%s, class %q)", pv.Name, capacity.String(), storagehelpers.GetPersistentVolumeClass(pv))
	if pv.Status.LastPhaseTransitionTime != nil && pv.Status.Phase == v1.VolumeBound {
		s += fmt.Sprintf(" since %s", a.ago(pv.Status.LastPhaseTransitionTime.Time))
	}
	if metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBoundByController) {
		s += ", chosen by the binder"
	} else {
		s += ", pre-bound by spec.volumeName"
	}
	if metav1.HasAnnotation(pv.ObjectMeta, storagehelpers.AnnDynamicallyProvisioned) {
		s += fmt.Sprintf(", provisioned by %s", pv.Annotations[storagehelpers.AnnDynamicallyProvisioned])
	}
	if manager := statusManager(claim); manager != "" {
		s += fmt.Sprintf(", status written by %s", manager)
	}
	return s
}

// statusManager is the field manager that last wrote the claim's status (managedFields are
// absent from `kubectl get -o yaml` dumps, so this is live only).
func statusManager(claim *v1.PersistentVolumeClaim) string {
	var manager string
	var newest time.Time
	for _, mf := range claim.ManagedFields {
		if mf.Subresource == "status" && mf.Time != nil && !mf.Time.Time.Before(newest) {
			manager, newest = mf.Manager, mf.Time.Time
		}
	}
	return manager
}

func (a *Analyzer) binderHint() string {
	if !a.binder.Known {
		return ""
	}
	// Only when nobody can be binding: not ours, and no KCM leader, or one known to run without
	// its binder (a KCM that is not a pod here may well be binding).
	if a.binder.Ours == "" && (a.binder.KCM == "" || a.binder.KCMBinder == "disabled") {
		return " (no binder is running: " + a.binder.Summary + ")"
	}
	return ""
}

func (a *Analyzer) ago(t time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	d := a.s.Now.Sub(t).Round(time.Second)
	if d < 0 {
		d = 0
	}
	return d.String() + " ago"
}

func claimRefString(ref *v1.ObjectReference) string {
	if ref == nil {
		return "no claim"
	}
	s := fmt.Sprintf("claim %s/%s", ref.Namespace, ref.Name)
	if ref.UID != "" {
		s += fmt.Sprintf(" (uid %s)", ref.UID)
	}
	return s
}

func hasAccessModes(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) bool {
	return len(missingAccessModes(claim, pv)) == 0
}

func missingAccessModes(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) []v1.PersistentVolumeAccessMode {
	var missing []v1.PersistentVolumeAccessMode
	for _, want := range claim.Spec.AccessModes {
		found := false
		for _, have := range pv.Spec.AccessModes {
			if have == want {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, want)
		}
	}
	return missing
}

func modesString(modes []v1.PersistentVolumeAccessMode) string {
	s := make([]string, len(modes))
	for i, m := range modes {
		s[i] = string(m)
	}
	return "[" + strings.Join(s, ",") + "]"
}

func volumeMode(mode *v1.PersistentVolumeMode) string {
	if mode == nil {
		return string(v1.PersistentVolumeFilesystem)
	}
	return string(*mode)
}

func labelString(l map[string]string) string {
	if len(l) == 0 {
		return "{}"
	}
	return "{" + labels.Set(l).String() + "}"
}

func podNames(pods []*v1.Pod) []string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	return names
}
