package torture

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// summary adds up both arms' results over the seeds, and says which findings fail the run.
type summary struct {
	seeds, failures int
	arms            map[string]*armSummary
	// differential outcomes per seed: how the two arms' settled states compare
	outcomes map[string]int
	// writes on fault-free seeds that settled the same: ours and upstream's, summed
	sameWrites [2]int
	// sameAllWrites: every client's writes of volumes and claims on those seeds
	sameAllWrites [2]int
	sameSeeds     int
	moreWrites    []string // those seeds where ours wrote more
	// events on the same seeds: those where the arms' event kinds differ, and examples
	eventSeeds   int
	eventDiffers []string
	// sharedLiveness counts ours' settled findings that upstream had identically.
	sharedLiveness  int
	sharedPlacement int
}

type armSummary struct {
	binds, writes int
	excess        int64 // capacity beyond requests at the end, summed over seeds
	pending       int   // claims left Pending at the end, summed over seeds
	violations    map[string]int
	firstSeed     map[string]uint64 // rule -> first seed that broke it
	injected      map[string]int
	settles       []time.Duration
}

func newSummary() *summary {
	s := &summary{arms: map[string]*armSummary{}, outcomes: map[string]int{}}
	for _, a := range []string{armOurs, armUpstream} {
		s.arms[a] = &armSummary{violations: map[string]int{}, firstSeed: map[string]uint64{}, injected: map[string]int{}}
	}
	return s
}

// Differential outcomes.
const (
	outcomeSame              = "same end state"
	outcomeChoice            = "same claims Bound, another PV chosen where several fit"
	outcomeOursMore          = "ours bound claims upstream left Pending"
	outcomeUpstreamMore      = "upstream bound a claim ours left Pending, its PV free"
	outcomeWorseFit          = "upstream bound a claim ours left Pending, a volume that fit it given to a claim it fits worse"
	outcomeUpstreamViolation = "upstream bound a claim by breaking an invariant (its violation), ours did not"
	outcomeContested         = "claims competing for a PV bound in another order (ours left Pending one upstream bound)"
	outcomeVolumesDiffer     = "same claims, volumes in other phases (timing: a claim deleted before or after its bind)"
	outcomeNotCompared       = "not compared: an arm was stopped in a hot loop"
	outcomeDeletingClaim     = "a claim being deleted (a pod still uses it): upstream bound it, ours starts no bind for it (its deletion came first, or upstream's violation)"
	outcomeDeletedFirst      = "a pre-bound claim's PV deleted before ours bound it (a namesake may have come since); upstream bound it first, and pv-protection holds it (timing)"
	outcomeEarlierClaim      = "a re-created claim's PV Released (Retain) or Failed (Delete, no deleter) from its earlier namesake, which only ours had bound before its deletion: never bound to another claim"
)

// add records one seed and returns the findings that fail the run.
func (s *summary) add(o, u result) []string {
	s.seeds++
	var fails []string
	for _, r := range []result{o, u} {
		a := s.arms[r.Arm]
		a.binds += r.Binds
		a.writes += r.writesTotal()
		a.excess += r.Excess
		a.pending += r.Pending
		a.settles = append(a.settles, r.Settle)
		for k, v := range r.Injected {
			a.injected[k] += v
		}
		for _, v := range r.Violations {
			if a.violations[string(v.Rule)] == 0 {
				a.firstSeed[string(v.Rule)] = r.Seed
			}
			a.violations[string(v.Rule)]++
		}
		if r.Error != "" {
			fails = append(fails, fmt.Sprintf("%s: %s", r.Arm, r.Error))
		}
	}
	for _, v := range o.Violations {
		// A liveness finding that upstream shows identically on the same seed (a provisioning
		// retry backed off past the settle window in both, bug 9) is reported, not failed.
		if v.RV == 0 && sharedWith(u, v) {
			s.sharedLiveness++
			continue
		}
		// A WaitForFirstConsumer claim that two volumes reserve, one of them on another node and
		// of access modes the claim does not take: kube-scheduler's FindMatchingVolume returns a
		// volume reserving the claim without looking at its access modes, so it may place the pod
		// on that volume's node, while both binders bind the one that fits (torture bug 20, open).
		// Shown identically by upstream's arm, or on a volume a user made to reserve the claim
		// (upstream's binder binds such a volume without looking at the node as well; whether its
		// arm shows it on one run is timing: seed 1796393862944996789 failed once in ours alone
		// and showed in both arms on replay): reported, not failed.
		if v.Rule == ruleNoFit && strings.Contains(v.Detail, "the claim's pod on") &&
			(sharedWith(u, v) || strings.Contains(v.Detail, "reserves the claim by claimRef")) {
			s.sharedPlacement++
			continue
		}
		fails = append(fails, "ours: "+v.String())
	}
	if stoppedInHotLoop(o) || stoppedInHotLoop(u) {
		// An arm stopped for a hot loop (its violation, above) has no end state to compare.
		s.outcomes[outcomeNotCompared]++
		if len(fails) > 0 {
			s.failures++
		}
		return fails
	}
	outcome, detail := compareEnds(o, u)
	s.outcomes[outcome]++
	if outcome == outcomeUpstreamMore || outcome == outcomeWorseFit {
		fails = append(fails, "differential: "+outcome+": "+detail)
	}
	// Writes compare where the two histories did the same work: no fault, the same end state,
	// the same phase changes and the same binds (each claim to the same volume, as often). Ours,
	// faster, may bind a claim that is deleted before upstream's resync would have bound it, or
	// bind an existing volume where upstream, later, provisioned one (seed 1796362331656846360 on
	// v1.38: ours then recycles the volume, one PV write more): other work, not compared. Where
	// the work is the same, ours must not write more than upstream.
	if o.Faults == (faultConfig{}).String() && outcome == outcomeSame && maps.Equal(o.Transitions, u.Transitions) && maps.Equal(o.BindPairs, u.BindPairs) {
		s.sameSeeds++
		s.sameWrites[0] += o.writesTotal()
		s.sameWrites[1] += u.writesTotal()
		s.sameAllWrites[0] += o.writesTotal() + o.WorkloadWrites
		s.sameAllWrites[1] += u.writesTotal() + u.WorkloadWrites
		if d := diffEvents(o.Events, u.Events); d != "" {
			s.eventSeeds++
			s.eventDiffers = append(s.eventDiffers, fmt.Sprintf("seed %d: %s", o.Seed, d))
		}
		// More than upstream's binder, and not made up for by the other clients: a binder that
		// writes a claimRef's UID before kube-scheduler does saves the scheduler's write (seed
		// 1796393862944997862); the other clients' writes alone differ with timing (seed
		// 1796395724033014504: the binders' writes equal, two more of the workload's in ours' run).
		if o.writesTotal() > u.writesTotal() && o.writesTotal()+o.WorkloadWrites > u.writesTotal()+u.WorkloadWrites {
			m := fmt.Sprintf("seed %d: ours %d (%v) + others %d, upstream %d (%v) + others %d", o.Seed, o.writesTotal(), o.Writes, o.WorkloadWrites,
				u.writesTotal(), u.Writes, u.WorkloadWrites)
			s.moreWrites = append(s.moreWrites, m)
			fails = append(fails, "differential: more writes than upstream for the same work: "+m)
		}
	}
	if len(fails) > 0 {
		s.failures++
	}
	return fails
}

// compareEnds says how the arms' settled states differ.
func compareEnds(o, u result) (string, string) {
	if maps.Equal(o.Claims, u.Claims) {
		if maps.Equal(o.Volumes, u.Volumes) {
			return outcomeSame, ""
		}
		return outcomeVolumesDiffer, diffMaps(o.Volumes, u.Volumes)
	}
	var oursOnly, upOnly, worse, contested, upstreamViolated, earlier, deletedFirst, deleting []string
	for k, ov := range o.Claims {
		uv := u.Claims[k]
		ob, ub := strings.HasPrefix(ov, "Bound"), strings.HasPrefix(uv, "Bound")
		switch {
		case ob && !ub:
			oursOnly = append(oursOnly, k)
		case ub && !ob:
			// Left Pending by ours while upstream bound it. For a claim without volumeName the
			// liveness check has already failed the run if a free PV fits it; so has it for a
			// pre-bound claim whose PV is free. What remains is a PV that another claim took
			// first: claims competing for one PV, bound in another order, or a claim Lost because
			// the PV ours chose (upstream chose another) was deleted (legitimate).
			if slices.Contains(o.Deleting, k) {
				deleting = append(deleting, k)
				continue
			}
			// Ours gave a volume that fit it to a claim that volume fits worse, while that claim
			// could have had a volume it fits better (bug 17): not a competition ours lost by
			// timing, a worse choice, where upstream bound the claim without breaking a rule.
			if d := o.WorseFits[k]; d != "" && strings.HasPrefix(ov, string(v1.ClaimPending)) && !upstreamBroke(u, k) {
				worse = append(worse, fmt.Sprintf("%s (ours %q, upstream %q): %s", k, ov, uv, d))
				continue
			}
			phase, x, _ := strings.Cut(ov, " ")
			_, holder, _ := strings.Cut(o.Volumes[x], " ")
			if x == "" || phase == "Lost" || holder != "" && holder != k || boundToAnother(o, k, x) {
				contested = append(contested, k)
				continue
			}
			// The claim ours left Pending is pre-bound to a PV ours Released: from an earlier
			// claim of the same name (this one was never Bound), which ours, faster through the
			// faults, bound before it was deleted and upstream did not. A Retain PV is never
			// bound again, so Pending is ours' only right answer (seed 1796164846233840766). A
			// Delete PV goes on from Released to Failed, the model having no deleter: the same
			// (seed 1796299422631505052).
			if strings.HasPrefix(o.Volumes[x], string(v1.VolumeReleased)+" ") || strings.HasPrefix(o.Volumes[x], string(v1.VolumeFailed)+" ") {
				earlier = append(earlier, k)
				continue
			}
			if upstreamBroke(u, k) {
				upstreamViolated = append(upstreamViolated, k)
				continue
			}
			// The PV is gone in ours' end (or another was created under its name since) and lives
			// on in upstream's: the user deleted it; upstream had bound it before, and
			// pv-protection keeps a Bound volume (seed 1796413630941399323: the namesake created
			// after the deletion is of a class the claim does not fit). Ours' speed is judged where
			// the PV stays (the settled liveness checks), not by this race.
			if _, inOurs := o.Volumes[x]; (!inOurs || slices.Contains(o.Recreated, x)) && strings.HasPrefix(u.Volumes[x], string(v1.VolumeBound)+" ") {
				deletedFirst = append(deletedFirst, k)
				continue
			}
			upOnly = append(upOnly, fmt.Sprintf("%s (ours %q, upstream %q; ours' %s: %q)", k, ov, uv, x, o.Volumes[x]))
		}
	}
	switch {
	case len(upOnly) > 0:
		slices.Sort(upOnly)
		return outcomeUpstreamMore, strings.Join(upOnly, ", ")
	case len(worse) > 0:
		slices.Sort(worse)
		return outcomeWorseFit, strings.Join(worse, ", ")
	case len(upstreamViolated) > 0:
		return outcomeUpstreamViolation, strings.Join(upstreamViolated, ", ")
	case len(contested) > 0:
		return outcomeContested, strings.Join(contested, ", ")
	case len(earlier) > 0:
		return outcomeEarlierClaim, strings.Join(earlier, ", ")
	case len(deleting) > 0:
		return outcomeDeletingClaim, strings.Join(deleting, ", ")
	case len(deletedFirst) > 0:
		return outcomeDeletedFirst, strings.Join(deletedFirst, ", ")
	case len(oursOnly) > 0:
		return outcomeOursMore, strings.Join(oursOnly, ", ")
	}
	return outcomeChoice, diffMaps(o.Claims, u.Claims)
}

// boundToAnother says whether ours bound the volume a claim asks for by name to another claim at
// some point: the claims competed for it, and ours gave it to the other (any of several claims
// pre-bound to a free volume may have it). What the user did to that volume afterwards (deleted
// it and created a namesake the claim does not fit: seed 1796395724033013806) does not make the
// order wrong; a namesake that fits and stays free fails the liveness check instead.
func boundToAnother(r result, claim, volume string) bool {
	for pair := range r.BindPairs {
		if c, v, _ := strings.Cut(pair, " -> "); v == volume && c != claim {
			return true
		}
	}
	return false
}

// diffEvents names the kinds of event (type, reason, object) that one arm recorded and the
// other did not.
func diffEvents(o, u map[string]int) string {
	var d []string
	for _, k := range slices.Sorted(maps.Keys(u)) {
		if o[k] == 0 {
			d = append(d, "only upstream: "+k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o)) {
		if u[k] == 0 {
			d = append(d, "only ours: "+k)
		}
	}
	return strings.Join(d, "; ")
}

func diffMaps(o, u map[string]string) string {
	var d []string
	for _, k := range slices.Sorted(maps.Keys(o)) {
		if o[k] != u[k] {
			d = append(d, fmt.Sprintf("%s: ours %q, upstream %q", k, o[k], u[k]))
		}
	}
	return strings.Join(d, "; ")
}

func (s *summary) String() string {
	var b strings.Builder
	for _, arm := range []string{armOurs, armUpstream} {
		a := s.arms[arm]
		fmt.Fprintf(&b, "%-8s binds %d, writes %d, settle p50 %s max %s, capacity beyond requests %.1f GiB, claims left Pending %d, violations %d\n", arm, a.binds, a.writes,
			percentile(a.settles, 0.5), percentile(a.settles, 1), gib(a.excess), a.pending, total(a.violations))
		for _, rule := range slices.Sorted(maps.Keys(a.violations)) {
			fmt.Fprintf(&b, "           %d x %s (first: seed %d)\n", a.violations[rule], rule, a.firstSeed[rule])
		}
	}
	fmt.Fprintf(&b, "injected (ours): %v\n", s.arms[armOurs].injected)
	for _, k := range slices.Sorted(maps.Keys(s.outcomes)) {
		fmt.Fprintf(&b, "differential: %d x %s\n", s.outcomes[k], k)
	}
	fmt.Fprintf(&b, "fault-free seeds with the same end state, phase changes, unbinds, hand-overs to a provisioner and binds: %d; binder writes ours %d, upstream %d; every client's ours %d, upstream %d", s.sameSeeds, s.sameWrites[0], s.sameWrites[1], s.sameAllWrites[0], s.sameAllWrites[1])
	fmt.Fprintf(&b, "\nsettled findings ours shared with upstream (not failed): %d", s.sharedLiveness)
	fmt.Fprintf(&b, "\nscheduler/binder placement findings shared with upstream (bug 20, not failed): %d", s.sharedPlacement)
	for _, m := range s.moreWrites {
		fmt.Fprintf(&b, "\nmore writes than upstream: %s", m)
	}
	fmt.Fprintf(&b, "\nof those, seeds whose kinds of event differ: %d", s.eventSeeds)
	for _, m := range s.eventDiffers[:min(len(s.eventDiffers), 5)] {
		fmt.Fprintf(&b, "\n  %s", m)
	}
	return b.String()
}

func (s *summary) markdown(first uint64, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Model torture: %d seeds from %d in %s\n\n", s.seeds, first, took.Round(time.Second))
	fmt.Fprintf(&b, "| | ours | upstream |\n|---|---|---|\n")
	o, u := s.arms[armOurs], s.arms[armUpstream]
	fmt.Fprintf(&b, "| claims bound | %d | %d |\n| binder writes | %d | %d |\n", o.binds, u.binds, o.writes, u.writes)
	fmt.Fprintf(&b, "| settle after the last operation, p50 / max (virtual) | %s / %s | %s / %s |\n",
		percentile(o.settles, 0.5), percentile(o.settles, 1), percentile(u.settles, 0.5), percentile(u.settles, 1))
	fmt.Fprintf(&b, "| capacity Bound beyond the claims' requests, at the end | %.1f GiB | %.1f GiB |\n", gib(o.excess), gib(u.excess))
	fmt.Fprintf(&b, "| claims left Pending at the end (not being deleted) | %d | %d |\n", o.pending, u.pending)
	fmt.Fprintf(&b, "| invariant violations | %d | %d |\n\n", total(o.violations), total(u.violations))
	for _, arm := range []string{armOurs, armUpstream} {
		a := s.arms[arm]
		if len(a.violations) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s's violations:\n\n| rule | seeds | first seed |\n|---|---|---|\n", arm)
		for _, rule := range slices.Sorted(maps.Keys(a.violations)) {
			fmt.Fprintf(&b, "| %s | %d | %d |\n", rule, a.violations[rule], a.firstSeed[rule])
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Faults injected into ours: ")
	for _, k := range slices.Sorted(maps.Keys(o.injected)) {
		fmt.Fprintf(&b, "%s %d, ", k, o.injected[k])
	}
	b.WriteString("\n\nDifferential (settled end states, ours against upstream):\n\n| outcome | seeds |\n|---|---|\n")
	for _, k := range slices.Sorted(maps.Keys(s.outcomes)) {
		fmt.Fprintf(&b, "| %s | %d |\n", k, s.outcomes[k])
	}
	fmt.Fprintf(&b, "\nFault-free seeds that settled the same with the same phase changes, unbinds, hand-overs to a provisioner and binds: %d; binder writes ours %d, upstream %d; every client's writes of volumes and claims ours %d, upstream %d.\n", s.sameSeeds, s.sameWrites[0], s.sameWrites[1], s.sameAllWrites[0], s.sameAllWrites[1])
	fmt.Fprintf(&b, "Of those, seeds where the kinds of event the binders recorded (type, reason, object) differ: %d.\n", s.eventSeeds)
	for _, m := range s.eventDiffers[:min(len(s.eventDiffers), 10)] {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	return b.String()
}

func gib(bytes int64) float64 { return float64(bytes) / (1 << 30) }

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p * float64(len(s)-1))
	return s[i].Round(time.Millisecond)
}

// upstreamBroke tells whether one of upstream's violations concerns claim k.
func upstreamBroke(u result, k string) bool {
	for _, v := range u.Violations {
		if strings.Contains(v.Detail, k+" ") {
			return true
		}
	}
	return false
}

// sharedWith tells whether upstream broke the same rule the same way.
func sharedWith(u result, v violation) bool {
	for _, w := range u.Violations {
		if w.Rule == v.Rule && w.Detail == v.Detail {
			return true
		}
	}
	return false
}

// stoppedInHotLoop tells whether the model stopped r's binder for a hot loop.
func stoppedInHotLoop(r result) bool {
	for _, v := range r.Violations {
		if v.Rule == ruleHotLoop {
			return true
		}
	}
	return false
}
