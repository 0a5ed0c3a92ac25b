package shadow

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// Outcome of one claim's comparison.
type Outcome string

// Outcomes, as the metric's outcome label.
const (
	Agree              Outcome = "agree"
	Disagree           Outcome = "disagree"
	DisagreeLegitimate Outcome = "disagree-legitimate"
	OnlyOurs           Outcome = "only-ours"
	OnlyKCM            Outcome = "only-kcm"
)

// Outcomes lists every outcome.
var Outcomes = []Outcome{Agree, Disagree, DisagreeLegitimate, OnlyOurs, OnlyKCM}

// Events on each compared claim (written for real by the manager's recorder), read by
// kubectl pvc-why --shadow: a Warning for a disagreement, a Normal event for every other outcome,
// the outcome and the lead in annotations of the Event.
const (
	ReasonDisagreement = "ShadowDisagreement"
	ReasonCompared     = "ShadowCompared"
	AnnotationOutcome  = "shadow.pv-controller-manager.fastpv.io/outcome"
	// AnnotationLead: seconds by which ours decided sooner (agree only).
	AnnotationLead = "shadow.pv-controller-manager.fastpv.io/lead-seconds"
)

const (
	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
)

// Decision is what one binder decided for a claim: bind Volume, or hand it to Provisioner.
type Decision struct {
	Volume, Provisioner string
	At                  time.Time
}

func (d Decision) String() string {
	if d.Provisioner != "" {
		return "provisioning by " + d.Provisioner
	}
	return "volume " + d.Volume
}

// Config of a Tracker.
type Config struct {
	// Window: a claim ours decided for and KCM has not bound that long after counts only-ours.
	Window time.Duration
	// Volume reads a volume from the informer's cache (nil, nil when absent), for a disagreement's legitimacy.
	Volume func(name string) (*v1.PersistentVolume, error)
	// Recorder writes the Warning events (for real: not through the dry-run client).
	Recorder record.EventRecorder
	Now      func() time.Time
}

type claimState struct {
	ref         *v1.ObjectReference // the claim, for the event of an outcome found by Expire
	ours        *Decision
	seenPending bool
	resolved    bool
}

// Tracker compares the two binders' decisions claim by claim.
type Tracker struct {
	cfg    Config
	logger klog.Logger
	mu     sync.Mutex
	claims map[types.UID]*claimState
	counts map[Outcome]int
}

// NewTracker returns a Tracker and registers the shadow metrics.
func NewTracker(logger klog.Logger, cfg Config) *Tracker {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	registerMetrics()
	return &Tracker{cfg: cfg, logger: logger, claims: map[types.UID]*claimState{}, counts: map[Outcome]int{}}
}

// Observe records ours' decisions from its dry-run writes: a volume written with a claimRef that
// has a UID (the bind's first write), a claim's volumeName written, or a claim annotated for a
// provisioner. The first decision per claim counts.
func (t *Tracker) Observe(w Write) {
	if w.Subresource != "" || len(w.Body) == 0 {
		return
	}
	now := t.cfg.Now()
	switch w.Resource {
	case "persistentvolumes":
		var pv v1.PersistentVolume
		if err := json.Unmarshal(w.Body, &pv); err != nil {
			t.logger.V(4).Info("Shadow: a volume write that is not JSON", "err", err)
			return
		}
		if ref := pv.Spec.ClaimRef; ref != nil && ref.UID != "" {
			t.decide(ref.UID, Decision{Volume: pv.Name, At: now})
		}
	case "persistentvolumeclaims":
		var claim v1.PersistentVolumeClaim
		if err := json.Unmarshal(w.Body, &claim); err != nil {
			t.logger.V(4).Info("Shadow: a claim write that is not JSON", "err", err)
			return
		}
		if p := provisionerOf(&claim); p != "" && claim.Spec.VolumeName == "" {
			t.decide(claim.UID, Decision{Provisioner: p, At: now})
		} else if claim.Spec.VolumeName != "" {
			t.decide(claim.UID, Decision{Volume: claim.Spec.VolumeName, At: now})
		}
	}
}

func (t *Tracker) decide(uid types.UID, d Decision) {
	if uid == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.claims[uid]
	if s == nil {
		s = &claimState{}
		t.claims[uid] = s
	}
	if s.resolved || s.ours != nil {
		return
	}
	s.ours = &d
}

// OnClaim is the claim informer's add and update: what KCM's binder did (ours only dry-runs).
func (t *Tracker) OnClaim(claim *v1.PersistentVolumeClaim) {
	now := t.cfg.Now()
	t.mu.Lock()
	s := t.claims[claim.UID]
	if s == nil {
		s = &claimState{}
		t.claims[claim.UID] = s
	}
	if s.resolved {
		t.mu.Unlock()
		return
	}
	s.ref = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}
	var kcm *Decision
	switch {
	case claim.Status.Phase == v1.ClaimPending && provisionerOf(claim) == "":
		s.seenPending = true
	case claim.Status.Phase == v1.ClaimPending:
		kcm = &Decision{Provisioner: provisionerOf(claim), At: now}
	case claim.Status.Phase == v1.ClaimBound && claim.Spec.VolumeName != "":
		kcm = &Decision{Volume: claim.Spec.VolumeName, At: now}
	}
	if kcm == nil {
		t.mu.Unlock()
		return
	}
	if !s.seenPending && s.ours == nil {
		// Bound (or handed to a provisioner) before we saw it Pending: a claim from before the
		// shadow started. Not compared.
		s.resolved = true
		t.mu.Unlock()
		return
	}
	s.resolved = true
	ours := s.ours
	t.mu.Unlock()
	t.resolve(claim, ours, kcm)
}

// OnClaimDeleted forgets a claim.
func (t *Tracker) OnClaimDeleted(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.claims, uid)
}

func (t *Tracker) resolve(claim *v1.PersistentVolumeClaim, ours, kcm *Decision) {
	outcome, why, lead := OnlyKCM, "", time.Duration(0)
	switch {
	case ours == nil:
	case ours.Volume == kcm.Volume && ours.Provisioner == kcm.Provisioner:
		outcome = Agree
		lead = max(kcm.At.Sub(ours.At), 0)
		leadSeconds.Observe(lead.Seconds())
	default:
		outcome = Disagree
		if rule := t.legitimate(claim, ours, kcm); rule != "" {
			outcome, why = DisagreeLegitimate, rule
		}
	}
	t.count(outcome)
	logger := t.logger.WithValues("PVC", klog.KObj(claim), "outcome", outcome)
	switch outcome {
	case Disagree:
		logger.Info("Shadow: the binders disagree", "ours", ours.String(), "kcm", kcm.String())
	case DisagreeLegitimate:
		logger.V(2).Info("Shadow: the binders chose differently, both legitimately", "ours", ours.String(), "kcm", kcm.String(), "rule", why)
	default:
		logger.V(4).Info("Shadow: compared")
	}
	var message string
	if ours == nil {
		message = fmt.Sprintf("%s: kube-controller-manager's binder chose %s before pv-controller-manager (shadow) had decided", outcome, kcm)
	} else {
		message = fmt.Sprintf("%s: pv-controller-manager (shadow) would have chosen %s; kube-controller-manager's binder chose %s", outcome, ours, kcm)
	}
	switch outcome {
	case Agree:
		message += fmt.Sprintf("; ours decided %s sooner", lead.Round(time.Millisecond))
	case DisagreeLegitimate:
		message += "; " + why
	}
	t.event(claim, outcome, lead, message)
}

// event records the outcome on the claim (obj: the claim or a reference to it).
func (t *Tracker) event(obj runtime.Object, outcome Outcome, lead time.Duration, message string) {
	if t.cfg.Recorder == nil {
		return
	}
	annotations := map[string]string{AnnotationOutcome: string(outcome)}
	kind, reason := v1.EventTypeNormal, ReasonCompared
	if outcome == Disagree {
		kind, reason = v1.EventTypeWarning, ReasonDisagreement
	}
	if outcome == Agree {
		annotations[AnnotationLead] = strconv.FormatFloat(lead.Seconds(), 'f', 3, 64)
	}
	t.cfg.Recorder.AnnotatedEventf(obj, annotations, kind, reason, "%s", message)
}

// legitimate names the rule under which both choices are right, or "": two volumes of the
// claim's class and the same capacity that both fit it (the matcher takes the smallest fit; among
// equals, the order of its cache decides). A pre-bound claim (spec.volumeName) has one right answer.
func (t *Tracker) legitimate(claim *v1.PersistentVolumeClaim, ours, kcm *Decision) string {
	if ours.Volume == "" || kcm.Volume == "" || t.cfg.Volume == nil || claim.Spec.VolumeName != "" && claim.Spec.VolumeName != kcm.Volume {
		return ""
	}
	a, err := t.cfg.Volume(ours.Volume)
	if err != nil || a == nil {
		return ""
	}
	b, err := t.cfg.Volume(kcm.Volume)
	if err != nil || b == nil {
		return ""
	}
	capA, capB := a.Spec.Capacity[v1.ResourceStorage], b.Spec.Capacity[v1.ResourceStorage]
	if capA.Cmp(capB) != 0 || a.Spec.StorageClassName != b.Spec.StorageClassName || !fits(claim, a) || !fits(claim, b) {
		return ""
	}
	// Ours' volume may since have gone to another claim for real (KCM bound it): it was free when
	// ours chose it, and the two binders ran side by side; that does not make the choice wrong.
	return fmt.Sprintf("both fit and are equal (class %q, %s): the smallest fit, ties broken by cache order", a.Spec.StorageClassName, capA.String())
}

func fits(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) bool {
	want, have := claim.Spec.Resources.Requests[v1.ResourceStorage], pv.Spec.Capacity[v1.ResourceStorage]
	class := ""
	if claim.Spec.StorageClassName != nil {
		class = *claim.Spec.StorageClassName
	}
	if have.Cmp(want) < 0 || pv.Spec.StorageClassName != class {
		return false
	}
	for _, m := range claim.Spec.AccessModes {
		if !slices.Contains(pv.Spec.AccessModes, m) {
			return false
		}
	}
	return true
}

func (t *Tracker) count(o Outcome) {
	decisionsTotal.WithLabelValues(string(o)).Inc()
	t.mu.Lock()
	t.counts[o]++
	t.mu.Unlock()
}

// Expire counts only-ours the claims ours decided for that KCM has not bound within the window.
func (t *Tracker) Expire() {
	now := t.cfg.Now()
	type expiredClaim struct {
		uid  types.UID
		ref  *v1.ObjectReference
		ours Decision
	}
	var expired []expiredClaim
	t.mu.Lock()
	for uid, s := range t.claims {
		if !s.resolved && s.ours != nil && now.Sub(s.ours.At) >= t.cfg.Window {
			s.resolved = true
			expired = append(expired, expiredClaim{uid, s.ref, *s.ours})
		}
	}
	t.mu.Unlock()
	for _, e := range expired {
		t.logger.V(2).Info("Shadow: ours would have bound a claim kube-controller-manager's binder did not", "claimUID", e.uid, "ours", e.ours.String(), "window", t.cfg.Window)
		t.count(OnlyOurs)
		if e.ref != nil {
			t.event(e.ref, OnlyOurs, 0, fmt.Sprintf("%s: pv-controller-manager (shadow) would have chosen %s; kube-controller-manager's binder had not bound the claim %s later",
				OnlyOurs, e.ours, t.cfg.Window))
		}
	}
}

// Run expires claims every second until ctx is done.
func (t *Tracker) Run(ctx context.Context) {
	wait.Until(t.Expire, time.Second, ctx.Done())
}

// Counts returns the outcomes counted so far.
func (t *Tracker) Counts() map[Outcome]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[Outcome]int, len(t.counts))
	for k, v := range t.counts {
		out[k] = v
	}
	return out
}

func provisionerOf(claim *v1.PersistentVolumeClaim) string {
	if p := claim.Annotations[annStorageProvisioner]; p != "" {
		return p
	}
	return claim.Annotations[annBetaStorageProvisioner]
}
