// Command report writes the parity table of make e2e-upstream: for each spec that ran in either
// arm, its result and duration with KCM's binder (the upstream arm) and with ours, from the junit
// reports upstream's e2e.test wrote (--ginkgo.junit-report). It exits non-zero when a spec that
// passed in the upstream arm did not pass in ours.
//
//	go run . -out parity.md upstream.xml ours.xml
//
// A missing report is an arm that did not run: its column says so.
package main

import (
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type junit struct {
	Suites []struct {
		Cases []testCase `xml:"testcase"`
	} `xml:"testsuite"`
}

type testCase struct {
	Name    string   `xml:"name,attr"`
	Status  string   `xml:"status,attr"`
	Time    float64  `xml:"time,attr"`
	Failure *message `xml:"failure"`
	Error   *message `xml:"error"`
	Skipped *message `xml:"skipped"`
}

type message struct {
	Message string `xml:"message,attr"`
}

// result is one spec in one arm.
type result struct {
	status  string // passed, failed, skipped
	seconds float64
	why     string
}

func main() {
	out := flag.String("out", "parity.md", "markdown file to write")
	flag.Parse()
	if flag.NArg() != 2 {
		log.Fatal("usage: report -out FILE UPSTREAM.xml OURS.xml")
	}
	arms := make([]map[string]result, 2)
	ran := make([]bool, 2)
	for i, path := range flag.Args() {
		r, err := read(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			log.Fatalf("%s: %v", path, err)
		}
		arms[i], ran[i] = r, true
	}
	table, regressions := render(arms, ran, flag.Args())
	if err := os.WriteFile(*out, []byte(table), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Print(table)
	if len(regressions) > 0 {
		log.Fatalf("passed with KCM's binder, not with ours: %s", strings.Join(regressions, "; "))
	}
}

func read(path string) (map[string]result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var j junit
	if err := xml.Unmarshal(data, &j); err != nil {
		return nil, err
	}
	results := map[string]result{}
	for _, s := range j.Suites {
		for _, c := range s.Cases {
			// Specs are "[It] <text> [<labels>]"; the rest are ginkgo's suite-level nodes.
			name, ok := strings.CutPrefix(c.Name, "[It] ")
			if !ok {
				continue
			}
			if i := strings.LastIndex(name, " ["); i > 0 && strings.HasSuffix(name, "]") {
				name = name[:i]
			}
			// A spec the focus did not select is reported "skipped" with that word alone.
			if c.Skipped != nil && c.Skipped.Message == "skipped" {
				continue
			}
			r := result{status: c.Status, seconds: c.Time}
			switch {
			case c.Failure != nil:
				r.status, r.why = "failed", c.Failure.Message
			case c.Error != nil:
				r.status, r.why = "failed", c.Error.Message
			case c.Skipped != nil:
				r.status, r.why = "skipped", c.Skipped.Message
			}
			if r.status == "" {
				r.status = "passed"
			}
			results[name] = r
		}
	}
	return results, nil
}

// render returns the table and the specs that passed upstream and not in ours.
func render(arms []map[string]result, ran []bool, paths []string) (string, []string) {
	names := map[string]bool{}
	for _, a := range arms {
		for n := range a {
			names[n] = true
		}
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var b strings.Builder
	fmt.Fprintf(&b, "| spec | KCM's binder | ours | duration, KCM's / ours |\n|---|---|---|---|\n")
	var regressions []string
	counts := map[string][2]int{}
	for _, n := range sorted {
		cells := make([]string, 2)
		durations := make([]string, 2)
		for i := range arms {
			if !ran[i] {
				cells[i], durations[i] = "not run", "-"
				continue
			}
			r, ok := arms[i][n]
			if !ok {
				cells[i], durations[i] = "not selected", "-"
				continue
			}
			cells[i], durations[i] = r.status, fmt.Sprintf("%.0f s", r.seconds)
			if r.status == "skipped" && r.why != "" {
				cells[i] = "skipped: " + oneLine(strings.TrimPrefix(r.why, "skipped - "))
			}
			if r.status == "failed" {
				cells[i] = "**failed**: " + oneLine(r.why)
			}
			c := counts[r.status]
			c[i]++
			counts[r.status] = c
		}
		if ran[0] && ran[1] && arms[0][n].status == "passed" && arms[1][n].status != "passed" {
			regressions = append(regressions, n)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s / %s |\n", strings.ReplaceAll(n, "|", `\|`), cells[0], cells[1], durations[0], durations[1])
	}
	fmt.Fprintf(&b, "\nReports: %s, %s. ", filepath.Base(paths[0]), filepath.Base(paths[1]))
	for _, s := range []string{"passed", "failed", "skipped"} {
		fmt.Fprintf(&b, "%s: %d with KCM's binder, %d with ours. ", s, counts[s][0], counts[s][1])
	}
	b.WriteString("\n")
	return b.String(), regressions
}

// oneLine keeps a failure message to its first line, short enough for a table cell.
func oneLine(s string) string {
	s = strings.TrimSpace(strings.SplitN(s, "\n", 2)[0])
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return strings.ReplaceAll(s, "|", `\|`)
}
