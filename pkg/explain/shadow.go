package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fastpv/pv-controller-manager/pkg/shadow"
)

// ShadowRecord is one claim's comparison in shadow mode, as the binder recorded it in an event
// (pkg/shadow): pvc-why reads what the binder decided, it does not analyse again.
type ShadowRecord struct {
	Namespace string    `json:"namespace"`
	Claim     string    `json:"claim"`
	Outcome   string    `json:"outcome"`
	Message   string    `json:"message"`
	Time      time.Time `json:"time"`
	// LeadSeconds: how much sooner ours decided (agree only).
	LeadSeconds *float64 `json:"leadSeconds,omitempty"`
}

// ShadowSummary is the comparisons in scope, counted.
type ShadowSummary struct {
	Outcomes map[string]int `json:"outcomes"`
	// Lead percentiles over the claims both agreed on, in seconds.
	LeadP50 float64        `json:"leadP50Seconds,omitzero"`
	LeadP90 float64        `json:"leadP90Seconds,omitzero"`
	LeadMax float64        `json:"leadMaxSeconds,omitzero"`
	Records []ShadowRecord `json:"records"`
}

// ShadowRecords reads the shadow's events on claims, in namespace (all with "") and for claim (any with "").
func ShadowRecords(s *Snapshot, namespace, claim string) []ShadowRecord {
	var out []ShadowRecord
	for _, e := range s.Events {
		if e.Reason != shadow.ReasonCompared && e.Reason != shadow.ReasonDisagreement || e.InvolvedObject.Kind != "PersistentVolumeClaim" {
			continue
		}
		if namespace != "" && e.InvolvedObject.Namespace != namespace || claim != "" && e.InvolvedObject.Name != claim {
			continue
		}
		r := ShadowRecord{Namespace: e.InvolvedObject.Namespace, Claim: e.InvolvedObject.Name, Outcome: e.Annotations[shadow.AnnotationOutcome],
			Message: e.Message, Time: eventTime(e)}
		if r.Outcome == "" {
			r.Outcome, _, _ = strings.Cut(e.Message, ":")
		}
		if lead, err := strconv.ParseFloat(e.Annotations[shadow.AnnotationLead], 64); err == nil {
			r.LeadSeconds = &lead
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b ShadowRecord) int {
		return strings.Compare(a.Namespace+"/"+a.Claim, b.Namespace+"/"+b.Claim)
	})
	return out
}

// SummarizeShadow counts the records by outcome.
func SummarizeShadow(records []ShadowRecord) ShadowSummary {
	s := ShadowSummary{Outcomes: map[string]int{}, Records: records}
	for _, o := range shadow.Outcomes {
		s.Outcomes[string(o)] = 0
	}
	var leads []float64
	for _, r := range records {
		s.Outcomes[r.Outcome]++
		if r.LeadSeconds != nil {
			leads = append(leads, *r.LeadSeconds)
		}
	}
	if len(leads) > 0 {
		slices.Sort(leads)
		at := func(q float64) float64 { return leads[int(math.Ceil(q*float64(len(leads))))-1] }
		s.LeadP50, s.LeadP90, s.LeadMax = at(0.5), at(0.9), leads[len(leads)-1]
	}
	return s
}

// WriteShadowText writes the summary and the claims worth reading: disagreements first, then
// only-ours and only-kcm (agreements are counted, not listed).
func WriteShadowText(w io.Writer, s ShadowSummary) error {
	var b strings.Builder
	if len(s.Records) == 0 {
		b.WriteString("no shadow comparison recorded in scope: is pv-controller-manager running with --shadow, and did claims bind in the last hour (events expire)?\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "shadow comparisons: %d claims (from the binder's events; events expire after an hour, the counters pv_controller_shadow_decisions_total do not)\n", len(s.Records))
	for _, o := range shadow.Outcomes {
		fmt.Fprintf(&b, "  %-20s %d\n", o, s.Outcomes[string(o)])
	}
	if s.Outcomes[string(shadow.Agree)] > 0 {
		fmt.Fprintf(&b, "ours decided sooner, where both agreed: p50 %.1fs, p90 %.1fs, max %.1fs\n", s.LeadP50, s.LeadP90, s.LeadMax)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	listed := false
	for _, o := range []shadow.Outcome{shadow.Disagree, shadow.OnlyOurs, shadow.OnlyKCM, shadow.DisagreeLegitimate} {
		for _, r := range s.Records {
			if r.Outcome != string(o) {
				continue
			}
			if !listed {
				fmt.Fprintln(tw, "\nNAMESPACE\tCLAIM\tOUTCOME\tWHAT")
				listed = true
			}
			_, what, _ := strings.Cut(r.Message, ": ")
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Namespace, r.Claim, r.Outcome, what)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if s.Outcomes[string(shadow.Disagree)] > 0 {
		b.WriteString("\ndisagreements: read each claim with kubectl pvc-why NAME -n NAMESPACE, and do not switch until each is explained (docs/operators/shadow.md)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteShadowJSON writes the summary as JSON.
func WriteShadowJSON(w io.Writer, s ShadowSummary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
