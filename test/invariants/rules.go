package invariants

import "fmt"

// Rule names an invariant. Safety rules hold at every instant; the settled ones once a run is
// quiet.
type Rule string

const (
	TwoClaimsOnePV     Rule = "one-to-one: two claims Bound to one PV"
	OneClaimTwoPVs     Rule = "one-to-one: one claim on two Bound PVs"
	RefsDisagree       Rule = "one-to-one: a Bound claim's PV does not name it"
	BoundWithoutRef    Rule = "a Bound PV without a claimRef UID"
	NoFit              Rule = "a Bound claim's PV does not fit it"
	LostRebound        Rule = "a claim bound again to a re-created PV that does not fit it"
	PreboundElsewhere  Rule = "a claim pre-bound to X bound elsewhere"
	ReservedElsewhere  Rule = "a PV reserving claim C bound to another claim"
	RetainedRebound    Rule = "a Released volume with Retain bound again"
	BoundLost          Rule = "a Bound claim lost a volume that still names it"
	BoundTakenAway     Rule = "a Bound volume's claimRef changed while its claim is Bound to it"
	VolumeNameChanged  Rule = "a claim's spec.volumeName changed"
	DeletingClaimBound Rule = "a claim being deleted newly bound"
	DeletingPVBound    Rule = "a volume being deleted newly bound"
	ReleasedEarly      Rule = "a volume Released while its claim exists"
	// The choice rules: of the volumes the binder knew of, a matched claim gets the one upstream's
	// documented order picks (only the model knows what the binder knew).
	ChoiceWorse                   Rule = "choice: a matched claim given another volume where upstream's choice is unique"
	ChoiceLargerWhileBetterComing Rule = "choice: a matched claim given a volume while a better one was about to turn Available"
	HotLoop                       Rule = "a hot loop: one object written again and again against the same version, without back-off"
	SettledFreeFits               Rule = "liveness: a Pending claim that a free PV fits"
	SettledPrebound               Rule = "liveness: a pre-bound claim Pending though its PV is free and fits"
	SettledReserved               Rule = "liveness: a claim Pending though a free PV reserving it fits"
	SettledProvision              Rule = "liveness: a claim of a provisioning class never bound"
	SettledHalfBound              Rule = "settled: claim and volume disagree"
	SettledPVPending              Rule = "settled: a volume still Pending"
	SettledLostMissing            Rule = "settled: a claim Bound to a missing PV"
	SettledOrphan                 Rule = "settled: a volume Bound to a claim that does not exist"
)

// Violation is a rule broken: at a commit (RV, the model), at a time since the run's start (At),
// or at the end (RV 0). Subject names what breaks it (a claim's namespace/name, a volume's name,
// or a claim's UID for one claim on two volumes): a harness that watches a condition over time
// keys it by Rule and Subject, which stay the same while the Detail (a phase, the first volume
// that fits) may change.
type Violation struct {
	Rule    Rule   `json:"rule"`
	Subject string `json:"subject,omitempty"`
	Detail  string `json:"detail"`
	RV      int64  `json:"rv"`
	At      string `json:"at"`
}

func (v Violation) String() string {
	switch {
	case v.RV != 0:
		return fmt.Sprintf("%s at rv %d (+%s): %s", v.Rule, v.RV, v.At, v.Detail)
	case v.At != "":
		return fmt.Sprintf("%s (+%s): %s", v.Rule, v.At, v.Detail)
	}
	return fmt.Sprintf("%s: %s", v.Rule, v.Detail)
}

// Key is what identifies the condition: its rule and its subject.
func (v Violation) Key() string { return string(v.Rule) + " " + v.Subject }

func violationf(rule Rule, subject, format string, args ...any) Violation {
	return Violation{Rule: rule, Subject: subject, Detail: fmt.Sprintf(format, args...)}
}
