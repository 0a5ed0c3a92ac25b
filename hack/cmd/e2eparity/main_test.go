package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const upstreamReport = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="Kubernetes e2e suite">
<testcase name="[SynchronizedBeforeSuite]" status="passed" time="2"></testcase>
<testcase name="[It] [sig-storage] PV Protection Verify &#34;immediate&#34; deletion [sig-storage]" status="passed" time="3.2"></testcase>
<testcase name="[It] [sig-storage] PVC Protection in use [sig-storage]" status="passed" time="8"></testcase>
<testcase name="[It] [sig-storage] local wrong node [Slow] [sig-storage, Slow]" status="skipped" time="1"><skipped message="skipped - Runs only when number of nodes &gt;= 2"></skipped></testcase>
<testcase name="[It] [sig-apps] not selected [sig-apps]" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
</testsuite></testsuites>`

const oursReport = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="Kubernetes e2e suite">
<testcase name="[It] [sig-storage] PV Protection Verify &#34;immediate&#34; deletion [sig-storage]" status="passed" time="4"></testcase>
<testcase name="[It] [sig-storage] PVC Protection in use [sig-storage]" status="failed" time="60"><failure message="timed out waiting for the claim to be Bound&#xA;more"></failure></testcase>
<testcase name="[It] [sig-storage] local wrong node [Slow] [sig-storage, Slow]" status="skipped" time="1"><skipped message="skipped - Runs only when number of nodes &gt;= 2"></skipped></testcase>
<testcase name="[It] [sig-apps] not selected [sig-apps]" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
</testsuite></testsuites>`

func write(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadKeepsSelectedSpecsByTheirText(t *testing.T) {
	r, err := read(write(t, t.TempDir(), "upstream.xml", upstreamReport))
	if err != nil {
		t.Fatal(err)
	}
	if len(r) != 3 {
		t.Fatalf("want the 3 selected specs (no suite nodes, no unselected spec), got %d: %v", len(r), r)
	}
	got, ok := r[`[sig-storage] local wrong node [Slow]`]
	if !ok || got.status != "skipped" || !strings.Contains(got.why, "number of nodes") {
		t.Fatalf("a spec that skipped itself keeps its reason and loses only its label list: %+v (found %v)", got, ok)
	}
}

func TestRenderFailsASpecThatPassedOnlyWithKCMsBinder(t *testing.T) {
	dir := t.TempDir()
	up, err := read(write(t, dir, "upstream.xml", upstreamReport))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := read(write(t, dir, "ours.xml", oursReport))
	if err != nil {
		t.Fatal(err)
	}
	table, regressions := render([]map[string]result{up, ours}, []bool{true, true}, []string{"upstream.xml", "ours.xml"})
	if len(regressions) != 1 || regressions[0] != "[sig-storage] PVC Protection in use" {
		t.Fatalf("regressions = %v, want the PVC Protection spec alone", regressions)
	}
	if !strings.Contains(table, "**failed**: timed out waiting for the claim to be Bound |") {
		t.Fatalf("the failure's first line belongs in the table:\n%s", table)
	}
	if !strings.Contains(table, "| 3 s / 4 s |") {
		t.Fatalf("durations of both arms belong in the table:\n%s", table)
	}
}

func TestRenderWithOneArmMarksTheOtherNotRun(t *testing.T) {
	ours, err := read(write(t, t.TempDir(), "ours.xml", oursReport))
	if err != nil {
		t.Fatal(err)
	}
	table, regressions := render([]map[string]result{nil, ours}, []bool{false, true}, []string{"upstream.xml", "ours.xml"})
	if len(regressions) != 0 {
		t.Fatalf("no parity to judge with one arm, got %v", regressions)
	}
	if !strings.Contains(table, "| not run | passed |") {
		t.Fatalf("the arm that did not run says so:\n%s", table)
	}
}
