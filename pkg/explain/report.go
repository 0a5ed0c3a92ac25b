package explain

import "time"

// Verdict names the state of a claim's binding in one word, for scripts (-o json).
type Verdict string

// Binding verdicts.
const (
	// Bound: the claim and its volume point at each other.
	Bound Verdict = "Bound"
	// Lost: the claim was bound, and its volume is gone or taken by another claim.
	Lost Verdict = "Lost"
	// Terminating: the claim is being deleted (kept while a pod uses it).
	Terminating Verdict = "Terminating"
	// BindPending: the binder's own matching would bind it now (a pre-bound pair that fits, a
	// volume reserved by claimRef, or a match); it has not yet. Is a binder running?
	BindPending Verdict = "BindPending"
	// PreboundVolumeMissing: spec.volumeName names a PV that does not exist.
	PreboundVolumeMissing Verdict = "PreboundVolumeMissing"
	// PreboundVolumeMismatch: spec.volumeName names an unclaimed PV that does not fit.
	PreboundVolumeMismatch Verdict = "PreboundVolumeMismatch"
	// PreboundVolumeTaken: spec.volumeName names a PV whose claimRef names another claim.
	PreboundVolumeTaken Verdict = "PreboundVolumeClaimedByOther"
	// VolumeReleased: the PV this claim asks for was released by an earlier claim of the same
	// name and kept (reclaim policy Retain): an operator must clear its claimRef.
	VolumeReleased Verdict = "VolumeReleasedNeedsOperator"
	// ReservedVolumeMismatch: a PV reserves this claim by claimRef but does not fit it.
	ReservedVolumeMismatch Verdict = "ReservedVolumeMismatch"
	// WaitForFirstConsumer: the class binds at first use and no pod uses the claim yet.
	WaitForFirstConsumer Verdict = "WaitForFirstConsumer"
	// WaitForPodScheduled: pods use the claim; the scheduler has not placed any of them.
	WaitForPodScheduled Verdict = "WaitForPodScheduled"
	// WaitForScheduler: a pod using the claim is placed, the scheduler has not reserved a PV.
	WaitForScheduler Verdict = "WaitForSchedulerBinding"
	// Provisioning: a provisioner was asked for a volume and has not failed (yet).
	Provisioning Verdict = "Provisioning"
	// ProvisioningFailed: the provisioner's last word is a failure.
	ProvisioningFailed Verdict = "ProvisioningFailed"
	// NoMatch: no PV fits and nothing will provision one.
	NoMatch Verdict = "NoMatchingVolume"
)

// ResizeState says which side a volume expansion waits for.
type ResizeState string

// Resize states.
const (
	ResizeNone                 ResizeState = "None"
	ResizeControllerPending    ResizeState = "ControllerExpansionPending"
	ResizeControllerInProgress ResizeState = "ControllerExpansionInProgress"
	ResizeControllerInfeasible ResizeState = "ControllerExpansionInfeasible"
	ResizeNodePending          ResizeState = "NodeExpansionPending"
	ResizeNodeInProgress       ResizeState = "NodeExpansionInProgress"
	ResizeNodeInfeasible       ResizeState = "NodeExpansionInfeasible"
)

// Report is the explanation of one claim: a verdict, a sentence, then the evidence.
type Report struct {
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	Phase     string  `json:"phase"`
	Verdict   Verdict `json:"verdict"`
	// Summary says in plain words what the claim waits for.
	Summary string `json:"summary"`
	// Details are the evidence, one fact a line.
	Details []string `json:"details,omitempty"`
	// Volume is the PV the claim is bound, pre-bound, reserved or would be bound to.
	Volume     string      `json:"volume,omitempty"`
	Candidates []Candidate `json:"candidates,omitempty"`
	Resize     *Resize     `json:"resize,omitempty"`
	Binder     Binder      `json:"binder"`
	// Events are the claim's newest events, newest first.
	Events []EventSummary `json:"events,omitempty"`
	// OK is true when the claim is Bound and no resize is pending: exit code 0.
	OK bool `json:"ok"`
}

// Candidate is a PV the claim could have been bound to, and why the binder does not.
type Candidate struct {
	Name         string `json:"name"`
	StorageClass string `json:"storageClass"`
	Capacity     string `json:"capacity"`
	Phase        string `json:"phase"`
	// Reasons the binder rejects it; empty when the binder would bind it.
	Reasons []string `json:"reasons,omitempty"`
}

// Resize compares the three sizes of a claim and names the side it waits for.
type Resize struct {
	State     ResizeState `json:"state"`
	Summary   string      `json:"summary"`
	Requested string      `json:"requested"`
	// VolumeCapacity is the PV's spec.capacity (what the controller side has expanded to).
	VolumeCapacity string `json:"volumeCapacity,omitempty"`
	// StatusCapacity is the claim's status.capacity (what the node side has expanded to).
	StatusCapacity    string   `json:"statusCapacity,omitempty"`
	AllocatedStatus   string   `json:"allocatedResourceStatus,omitempty"`
	Conditions        []string `json:"conditions,omitempty"`
	ExpansionAllowed  *bool    `json:"expansionAllowed,omitempty"`
	ExpansionRejected string   `json:"expansionRejected,omitempty"`
}

// Binder is what is known of the PersistentVolume binders of the cluster.
type Binder struct {
	// Known is false when the snapshot has no leases (a dump without them).
	Known   bool   `json:"known"`
	Summary string `json:"summary"`
	// Ours is the holder of the pv-controller-manager Lease, if it is renewed.
	Ours string `json:"ours,omitempty"`
	// KCM is the holder of kube-controller-manager's Lease, if it is renewed.
	KCM string `json:"kcm,omitempty"`
	// KCMBinder is "enabled", "disabled" or "unknown" for the KCM that holds its Lease.
	KCMBinder string `json:"kcmBinder,omitempty"`
	// LastEvent is the binder's newest event on this claim.
	LastEvent *EventSummary `json:"lastEvent,omitempty"`
}

// EventSummary is one event, as `kubectl describe` shows it.
type EventSummary struct {
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Source  string    `json:"source,omitempty"`
	Count   int32     `json:"count,omitempty"`
	Time    time.Time `json:"time"`
}
