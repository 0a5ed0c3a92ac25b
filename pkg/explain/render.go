package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes one report as the plugin prints it: the verdict in words, then evidence.
func WriteText(w io.Writer, r *Report, now time.Time) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s/%s is %s: %s\n", r.Namespace, r.Name, r.Phase, r.Summary)
	fmt.Fprintf(b, "verdict: %s", r.Verdict)
	if r.Resize != nil && r.Resize.State != ResizeNone {
		fmt.Fprintf(b, ", resize: %s", r.Resize.State)
	}
	b.WriteString("\n\n")
	for _, d := range r.Details {
		fmt.Fprintf(b, "  %s\n", d)
	}
	if len(r.Candidates) > 0 {
		b.WriteString("  volumes considered (nearest first):\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		for _, c := range r.Candidates {
			why := "the binder would bind it"
			if len(c.Reasons) > 0 {
				why = strings.Join(c.Reasons, "; ")
			}
			phase := c.Phase
			if phase == "" {
				phase = "-"
			}
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\n", c.Name, orDash(c.StorageClass), c.Capacity, phase, why)
		}
		_ = tw.Flush()
	}
	if rs := r.Resize; rs != nil {
		fmt.Fprintf(b, "  resize: %s\n", rs.Summary)
		fmt.Fprintf(b, "    requested %s, PV capacity %s, claim status capacity %s", rs.Requested, orDash(rs.VolumeCapacity), orDash(rs.StatusCapacity))
		if rs.AllocatedStatus != "" {
			fmt.Fprintf(b, ", allocatedResourceStatus %s", rs.AllocatedStatus)
		}
		b.WriteString("\n")
		for _, c := range rs.Conditions {
			fmt.Fprintf(b, "    condition %s\n", c)
		}
		if rs.ExpansionRejected != "" {
			fmt.Fprintf(b, "    %s\n", rs.ExpansionRejected)
		}
	}
	fmt.Fprintf(b, "  binder: %s\n", r.Binder.Summary)
	if e := r.Binder.LastEvent; e != nil {
		fmt.Fprintf(b, "    last acted on this claim %s: %s %s: %s\n", age(now, e.Time), e.Type, e.Reason, e.Message)
	} else {
		b.WriteString("    no binder event on this claim\n")
	}
	if len(r.Events) > 0 {
		b.WriteString("  events (newest first):\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		for _, e := range r.Events {
			count := ""
			if e.Count > 1 {
				count = fmt.Sprintf(" (x%d)", e.Count)
			}
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s%s\n", age(now, e.Time), e.Type, e.Reason, orDash(e.Source), e.Message, count)
		}
		_ = tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTable writes one line per report, for --all-namespaces or a whole namespace.
func WriteTable(w io.Writer, reports []*Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tPHASE\tVERDICT\tWHY")
	for _, r := range reports {
		verdict := string(r.Verdict)
		why := r.Summary
		if r.Resize != nil && r.Resize.State != ResizeNone {
			verdict += "/" + string(r.Resize.State)
			why = r.Resize.Summary
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Namespace, r.Name, r.Phase, verdict, why)
	}
	return tw.Flush()
}

// WriteJSON writes the reports as a JSON array (one object for a single claim).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func age(now, t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	d := now.Sub(t).Round(time.Second)
	if d < 0 {
		d = 0
	}
	return d.String() + " ago"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
