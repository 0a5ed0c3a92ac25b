package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fastpv/pv-controller-manager/pkg/explain"
)

// TestJSONOutputAndExitCodes runs the plugin's Main on the dump: exit codes and -o json.
func TestJSONOutputAndExitCodes(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(t.Context(), append([]string{"--from-file", "../../../pkg/explain/testdata/dump.yaml"}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, _, _ := run("-n", "bound", "data"); code != ExitOK {
		t.Errorf("bound claim: exit %d, want %d", code, ExitOK)
	}
	if code, _, _ := run("-n", "resize-node", "data"); code != ExitNotReady {
		t.Errorf("bound claim with a resize pending: exit %d, want %d", code, ExitNotReady)
	}
	code, out, _ := run("-n", "prebound-missing", "data", "-o", "json")
	if code != ExitNotReady {
		t.Errorf("pending claim: exit %d, want %d", code, ExitNotReady)
	}
	var r explain.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Verdict != explain.PreboundVolumeMissing || r.Volume != "pv-not-there" {
		t.Errorf("-o json: %v, %+v", err, r)
	}
	code, out, _ = run("-A", "-o", "json")
	var all []explain.Report
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("-A -o json: %v", err)
	}
	if code != ExitNotReady || len(all) != 19 {
		t.Errorf("-A: exit %d and %d claims, want %d and the 19 that are not Bound or are resizing", code, len(all), ExitNotReady)
	}
	for _, r := range all {
		if r.OK {
			t.Errorf("-A lists %s/%s, which is fine", r.Namespace, r.Name)
		}
	}
	if code, out, _ := run("-n", "bound"); code != ExitOK || !strings.Contains(out, "every claim") {
		t.Errorf("a namespace with only bound claims: exit %d, %q", code, out)
	}
	if code, _, errOut := run("-n", "bound", "nope"); code != ExitError || !strings.Contains(errOut, `"nope" not found`) {
		t.Errorf("unknown claim: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run("-A", "data"); code != ExitError || !strings.Contains(errOut, "--all-namespaces") {
		t.Errorf("name with -A: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run("-o", "wide"); code != ExitError || !strings.Contains(errOut, "--output") {
		t.Errorf("-o wide: exit %d, %q", code, errOut)
	}
}

// Validate: each bad combination is refused with the flag it concerns.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"output", Options{Output: "yaml"}, "--output"},
		{"name with -A", Options{Output: "text", Name: "data", AllNamespaces: true}, "--all-namespaces"},
		{"negative candidates", Options{Output: "json", Candidates: -1}, "--candidates"},
	} {
		if err := tc.o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.want)
		}
	}
	if err := (&Options{Output: "json", Candidates: 5}).Validate(); err != nil {
		t.Errorf("valid options: %v", err)
	}
}

// --shadow reads the shadow's events: counts per outcome in scope, the claims worth reading, exit 1
// on a disagreement.
func TestShadowSummaryFromEvents(t *testing.T) {
	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := Main(t.Context(), append([]string{"--from-file", "../../../pkg/explain/testdata/shadow-events.yaml", "--shadow"}, args...), &out, &errOut)
		if errOut.Len() > 0 {
			t.Logf("stderr: %s", errOut.String())
		}
		return code, out.String()
	}
	code, out := run("-A")
	for _, want := range []string{"shadow comparisons: 4 claims", "agree                2", "disagree             1", "disagree-legitimate  1",
		"p50 4.0s, p90 10.0s, max 10.0s", "apps       c      disagree", "kube-controller-manager's binder chose volume pv-big", "do not switch"} {
		if !strings.Contains(out, want) {
			t.Errorf("-A --shadow: want %q in\n%s", want, out)
		}
	}
	if code != ExitNotReady {
		t.Errorf("-A --shadow with a disagreement: exit %d, want %d", code, ExitNotReady)
	}
	code, out = run("-n", "db", "-o", "json")
	var s explain.ShadowSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil || code != ExitOK || s.Outcomes["disagree-legitimate"] != 1 || len(s.Records) != 1 {
		t.Errorf("-n db -o json: exit %d, %v, %+v", code, err, s)
	}
	if code, out := run("-n", "apps", "a"); code != ExitOK || !strings.Contains(out, "shadow comparisons: 1 claims") || !strings.Contains(out, "agree                1") {
		t.Errorf("one claim: exit %d\n%s", code, out)
	}
	if code, out := run("-n", "nothing-here"); code != ExitOK || !strings.Contains(out, "no shadow comparison recorded") {
		t.Errorf("empty scope: exit %d\n%s", code, out)
	}
}
