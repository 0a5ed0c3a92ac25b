// Command benchreport turns a `make bench` output directory into report.md (one table per
// scenario, both arms side by side, against the apiserver's write ceiling measured in the same run)
// and one PNG per scenario with the claim->Bound latency CDF of each arm.
//
//	go run . DIR
//	go run . count-writes AUDIT_LOG   (writes to PVs and claims by client, JSON: RUN.writes.json)
//
// DIR holds, per run, SCENARIO-qpsQPS-ARM.json (pv-load's result) and SCENARIO-qpsQPS-ARM.meta.json
// (hack/bench/bench.sh: writes, conflicts, CPU, RSS), and write-ceiling.json (pv-load --scenario write-ceiling).
package main

import (
	"encoding/json"
	"fmt"
	"image/color"
	"log"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/fastpv/pv-controller-manager/test/harness/loadgen/result"
)

// The types pv-load writes (test/harness/loadgen/result), read as they are written.
type (
	sample  = result.Sample
	ceiling = result.Ceiling
)

type meta struct {
	Arm         string  `json:"arm"`
	Scenario    string  `json:"scenario"`
	QPS         string  `json:"qps"`
	SyncPeriod  string  `json:"syncPeriod"`
	Count       int     `json:"count"`
	Writes      *int    `json:"writes"`
	Conflicts   *int    `json:"conflicts"`
	CPUSeconds  float64 `json:"cpuSeconds"`
	PeakRSSMiB  float64 `json:"peakRSSMiB"`
	BinderFlags string  `json:"binderFlags"`
	Verified    bool    `json:"verified"`
}

type run struct {
	key     string // scenario-qpsN
	arm     string
	result  result.Result
	meta    meta
	hasMeta bool // runs before the meta files existed show n/a
}

// unfinished is ">" for a run that had not bound every claim: its time and ratio are lower bounds.
func unfinished(r run) string {
	if r.result.Unbound > 0 {
		return ">"
	}
	return ""
}

// lowerBoundOf is "< " when only upstream gave up: ours' time over upstream's is then an upper bound.
func lowerBoundOf(up, ours run) string {
	if up.result.Unbound > 0 && ours.result.Unbound == 0 {
		return "< "
	}
	return ""
}

// binds is the number of claims bound in the run: its count, less those still unbound when the
// load generator gave up (LOAD_TIMEOUT). Per-bind figures divide by it.
func (r run) binds() int { return r.result.Count - r.result.Unbound }

// Arms: upstream, ours, and variants of either (ours+NAME, upstream+NAME: hack/bench/bench.sh's ARMS).
var runFile = regexp.MustCompile(`^(.+-qps[0-9]+)-((?:upstream|ours)(?:\+[A-Za-z0-9_]+)?)\.json$`)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "count-writes" {
		// hack/bench/bench.sh, after each run: the audit log's writes by client, as JSON.
		counts, err := countAuditWrites(os.Args[2])
		if err != nil {
			log.Fatal(err)
		}
		if err := json.NewEncoder(os.Stdout).Encode(counts); err != nil {
			log.Fatal(err)
		}
		return
	}
	if len(os.Args) != 2 {
		log.Fatal("usage: benchreport DIR | benchreport count-writes AUDIT_LOG")
	}
	dir := os.Args[1]
	// The raw JSON of a committed run is kept compressed (raw.tar.gz, hack/bench/bench.sh).
	in, err := rawDir(dir)
	if err != nil {
		log.Fatal(err)
	}
	if in != dir {
		defer os.RemoveAll(in)
	}
	entries, err := os.ReadDir(in)
	if err != nil {
		log.Fatal(err)
	}
	groups := map[string][]run{}
	for _, e := range entries {
		m := runFile.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		r := run{key: m[1], arm: m[2]}
		mustRead(filepath.Join(in, e.Name()), &r.result)
		metaPath := filepath.Join(in, strings.TrimSuffix(e.Name(), ".json")+".meta.json")
		if _, err := os.Stat(metaPath); err == nil {
			mustRead(metaPath, &r.meta)
			r.hasMeta = true
		} else {
			r.meta.QPS = strings.TrimPrefix(regexp.MustCompile(`qps[0-9]+$`).FindString(r.key), "qps")
			r.meta.SyncPeriod = "?"
		}
		groups[r.key] = append(groups[r.key], r)
	}
	var ceil *ceiling
	if _, err := os.Stat(filepath.Join(in, "write-ceiling.json")); err == nil {
		ceil = &ceiling{}
		mustRead(filepath.Join(in, "write-ceiling.json"), ceil)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	var md strings.Builder
	header, _ := os.ReadFile(filepath.Join(dir, "summary.txt"))
	fmt.Fprintf(&md, "# Benchmark %s\n\n", filepath.Base(dir))
	if line, _, _ := strings.Cut(string(header), "\n"); strings.HasPrefix(line, "#") {
		fmt.Fprintf(&md, "Machine and build: `%s`\n\n", strings.TrimSpace(strings.TrimPrefix(line, "#")))
	}
	if ceil != nil {
		fmt.Fprintf(&md, "Apiserver write ceiling, measured in the same run with no binder running (`write-ceiling.json`): "+
			"**%.0f writes/s** (creates and the 4 writes of a bind, %d clients). The floor is the time the apiserver needs, at that rate, "+
			"for the writes between the start of the clock and the last bind: 4 per bind plus the creates in that span "+
			"(prebound, claimref: N PVs and N claims; pvc-first: the N PVs; matched: the N claims, the PVs exist before; "+
			"churn: 7 more per claim, its delete, the fresh PV, the new claim, the old PV's Released write and delete, and KCM's two finalizer removals), "+
			"or 4 writes per bind at the binder's client QPS if that takes longer. \"all bound\" is compared with it.\n\n",
			ceil.WritesPerSecond, ceil.Concurrency)
	}
	for _, key := range keys {
		runs := groups[key]
		slices.SortFunc(runs, func(a, b run) int { // upstream and its variants first, then ours and its variants, by name
			if isUpstream(a.arm) != isUpstream(b.arm) {
				if isUpstream(a.arm) {
					return -1
				}
				return 1
			}
			return strings.Compare(a.arm, b.arm)
		})
		first := runs[0]
		title := first.result.Scenario
		if first.result.Order != "" {
			title += " (" + first.result.Order + ")"
		}
		fmt.Fprintf(&md, "## %s: %d claims, binder QPS %s, sync period %s\n\n", title, first.result.Count, first.meta.QPS, first.meta.SyncPeriod)
		fmt.Fprintln(&md, "| arm | p50 | p90 | p99 | max | all bound | floor (ceiling) | writes/bind | 409s | binder CPU | binder CPU per bind | peak RSS | one-to-one |")
		fmt.Fprintln(&md, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
		for _, r := range runs {
			floor := "n/a"
			if ceil != nil && ceil.WritesPerSecond > 0 {
				f := floorOf(r, ceil.WritesPerSecond)
				floor = fmt.Sprintf("%s (%s%.1fx)", secs(f), unfinished(r), r.result.TimeToAllBound.Seconds()/f.Seconds())
			}
			writes, conflicts := "n/a", "n/a"
			if r.meta.Writes != nil && r.binds() > 0 {
				writes = fmt.Sprintf("%.2f", float64(*r.meta.Writes)/float64(r.binds()))
			}
			if r.meta.Conflicts != nil {
				conflicts = fmt.Sprint(*r.meta.Conflicts)
			}
			arm := r.arm
			if strings.HasPrefix(arm, "ours") {
				arm = "**" + arm + "**"
			}
			verified, cpu, rss, perBind := "yes", "n/a", "n/a", "n/a"
			if ms, how, ok := binderCPUPerBind(in, r, find(runs, "ours")); ok {
				perBind = fmt.Sprintf("%.2f ms", ms)
				if isUpstream(r.arm) {
					perBind = fmt.Sprintf("~%.2f ms (%s)", ms, how)
				}
			}
			if !r.hasMeta {
				verified = "n/a"
			} else {
				if !r.meta.Verified {
					verified = "NO"
				}
				cpu, rss = fmt.Sprintf("%.1f s", r.meta.CPUSeconds), fmt.Sprintf("%.0f MiB", r.meta.PeakRSSMiB)
			}
			allBound := secs(r.result.TimeToAllBound)
			if r.result.Unbound > 0 {
				// pv-load checks one-to-one only when every claim is bound; latencies are those of the bound ones.
				verified = fmt.Sprintf("not checked (%d unbound)", r.result.Unbound)
				allBound = fmt.Sprintf("%d of %d by %s", r.binds(), r.result.Count, allBound)
			}
			fmt.Fprintf(&md, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", arm,
				secs(pct(r.result, 0.50)), secs(pct(r.result, 0.90)), secs(pct(r.result, 0.99)), secs(pct(r.result, 1)),
				allBound, floor, writes, conflicts, cpu, perBind, rss, verified)
		}
		if up, ours := find(runs, "upstream"), find(runs, "ours"); up != nil && ours != nil && pct(up.result, 1) > 0 {
			fmt.Fprintf(&md, "\nours / upstream: max latency %.2f, p50 %.2f, time to all bound %s%.2f.\n",
				pct(ours.result, 1).Seconds()/pct(up.result, 1).Seconds(),
				pct(ours.result, 0.5).Seconds()/math.Max(pct(up.result, 0.5).Seconds(), 1e-9),
				lowerBoundOf(*up, *ours),
				ours.result.TimeToAllBound.Seconds()/up.result.TimeToAllBound.Seconds())
			if up.result.Unbound > 0 || ours.result.Unbound > 0 {
				md.WriteString("An arm that had not bound every claim when the load generator gave up (LOAD_TIMEOUT) shows the time it gave up; its latencies are those of the claims it bound, so they are lower bounds.\n")
			}
		}
		if stages := wffcStages(runs); stages != "" {
			md.WriteString(stages)
		}
		md.WriteString(churnStages(runs))
		for _, r := range runs {
			md.WriteString(controlPlane(in, r))
			md.WriteString(writesByClient(in, r))
			md.WriteString(cpuDuringRun(in, r))
			md.WriteString(cpuProfileSplit(in, r))
		}
		png := "cdf-" + key + ".png"
		if err := plotCDF(filepath.Join(dir, png), key, runs); err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(&md, "\n![claim->Bound latency CDF, %s](%s)\n\n", key, png)
	}
	fmt.Fprintln(&md, "Latency is claim creation to Bound, seen by a watch in the load generator; \"all bound\" is from the first create to the last Bound. "+
		"Writes and 409s come from the apiserver audit log (user agent persistent-volume-binder); CPU and RSS of the binder process (upstream: all of KCM). "+
		"Binder CPU per bind is the binder's CPU seconds over the run divided by the claims bound; upstream's binder runs inside KCM, so its figure is KCM's CPU in upstream's run less KCM's in ours' run of the same scenario (KCM without its binder): an estimate.")
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(md.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("benchreport: wrote %s\n", filepath.Join(dir, "report.md"))
}

// isUpstream says whether an arm runs KCM's own binder: upstream, or a variant of it (upstream+NAME).
func isUpstream(arm string) bool {
	base, _, _ := strings.Cut(arm, "+")
	return base == "upstream"
}

// floorOf is the shortest time to all bound that the apiserver's write ceiling allows for the run's
// writes, or that the binder's client rate limit allows for 4 writes per bind after a first burst
// of --kube-api-burst (= QPS in the bench), whichever is longer.
func floorOf(r run, writesPerSecond float64) time.Duration {
	f := time.Duration(float64(r.result.WritesAfterStart) / writesPerSecond * float64(time.Second))
	if qps, err := strconv.ParseFloat(r.meta.QPS, 64); err == nil && qps > 0 {
		f = max(f, time.Duration(max(0, 4*float64(r.result.Count)-qps)/qps*float64(time.Second)))
	}
	return f
}

// wffcStages says where a WaitForFirstConsumer bind's time goes, per arm: pod created -> the
// scheduler writes the PV's claimRef (its queue, filters and client QPS), -> claim Bound (the
// binder), -> pod scheduled (the scheduler noticing the bind, it polls, and binding the pod).
func wffcStages(runs []run) string {
	var b strings.Builder
	for _, arm := range []string{"upstream", "ours"} {
		r := find(runs, arm)
		if r == nil || len(r.result.PodScheduled) == 0 {
			continue
		}
		at := func(samples []sample) map[string]time.Duration {
			m := map[string]time.Duration{}
			for _, s := range samples {
				m[s.Claim] = s.Latency
			}
			return m
		}
		reserved, bound, scheduled := at(r.result.VolumeReserved), at(r.result.Samples), at(r.result.PodScheduled)
		var toReserved, toBound, toScheduled []sample
		for name, s := range scheduled {
			rv, okR := reserved[name]
			bd, okB := bound[name]
			if !okR || !okB {
				continue
			}
			toReserved = append(toReserved, sample{Claim: name, Latency: rv})
			toBound = append(toBound, sample{Claim: name, Latency: max(bd-rv, 0)})
			toScheduled = append(toScheduled, sample{Claim: name, Latency: max(s-bd, 0)})
		}
		stage := func(name string, s []sample) string {
			rs := result.Result{Samples: s}
			return fmt.Sprintf("%s p50 %s, max %s", name, secs(pct(rs, 0.5)), secs(pct(rs, 1)))
		}
		fmt.Fprintf(&b, "\n%s, where the time goes (%d pods): %s; %s; %s.\n", arm, len(toReserved),
			stage("pod created -> PV reserved by the scheduler", toReserved),
			stage("-> claim Bound by the binder", toBound),
			stage("-> pod scheduled", toScheduled))
	}
	return b.String()
}

// churnStages: per arm, how long deletions took to finish (KCM's protection controllers) and how
// the run's time splits between the delete-and-recreate loop and the binds after it.
func churnStages(runs []run) string {
	var b strings.Builder
	for i := range runs {
		r, arm := &runs[i], runs[i].arm
		if len(r.result.ClaimDeleteToGone) == 0 {
			continue
		}
		c, v := result.Result{Samples: r.result.ClaimDeleteToGone}, result.Result{Samples: r.result.VolumeDeleteToGone}
		fmt.Fprintf(&b, "\n%s: claim delete -> gone p50 %s, max %s; old volume delete -> gone p50 %s, max %s; delete-and-recreate loop %s, then all bound +%s (total %s).\n",
			arm, secs(pct(c, 0.5)), secs(pct(c, 1)), secs(pct(v, 0.5)), secs(pct(v, 1)),
			secs(r.result.ChurnLoop), secs(max(r.result.TimeToAllBound-r.result.ChurnLoop, 0)), secs(r.result.TimeToAllBound))
	}
	return b.String()
}

func find(runs []run, arm string) *run {
	for i := range runs {
		if runs[i].arm == arm {
			return &runs[i]
		}
	}
	return nil
}

func pct(r result.Result, p float64) time.Duration {
	if len(r.Samples) == 0 {
		return 0
	}
	lat := make([]time.Duration, len(r.Samples))
	for i, s := range r.Samples {
		lat[i] = s.Latency
	}
	slices.Sort(lat)
	i := int(math.Ceil(p*float64(len(lat)))) - 1
	return lat[max(0, min(i, len(lat)-1))]
}

func secs(d time.Duration) string {
	if d >= time.Minute {
		return d.Round(time.Second).String()
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func plotCDF(path, title string, runs []run) error {
	p := plot.New()
	p.Title.Text = "claim->Bound latency CDF: " + title
	p.X.Label.Text = "seconds after claim creation"
	p.Y.Label.Text = "fraction of claims Bound"
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	colors := map[string]color.Color{"upstream": color.RGBA{R: 200, G: 60, B: 40, A: 255}, "ours": color.RGBA{R: 30, G: 90, B: 200, A: 255}}
	for _, r := range runs {
		lat := make([]float64, len(r.result.Samples))
		for i, s := range r.result.Samples {
			lat[i] = s.Latency.Seconds()
		}
		slices.Sort(lat)
		pts := make(plotter.XYs, 0, len(lat)+1)
		pts = append(pts, plotter.XY{X: 0, Y: 0})
		for i, x := range lat {
			pts = append(pts, plotter.XY{X: x, Y: float64(i+1) / float64(r.result.Count)})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = colors[r.arm]
		line.Width = vg.Points(2)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s (max %s)", r.arm, secs(pct(r.result, 1))), line)
	}
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(10), vg.Points(10)
	return p.Save(8*vg.Inch, 4.5*vg.Inch, path)
}

func mustRead(path string, v any) {
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
}
