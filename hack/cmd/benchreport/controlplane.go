package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The control plane beside the binder: make bench scrapes KCM's and the apiserver's metrics before
// and after each run (RUN.cp-before.prom, RUN.cp-after.prom: KCM's lines prefixed kcm_), so the
// report can say how long KCM's other controllers waited and worked beside each arm.

// promSample is one line of a scrape: metric name, labels as written, value.
type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

var promLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)`)
var promLabel = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

func readProm(path string) ([]promSample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []promSample
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := promLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			continue
		}
		s := promSample{name: m[1], labels: map[string]string{}, value: v}
		for _, l := range promLabel.FindAllStringSubmatch(m[2], -1) {
			s.labels[l[1]] = l[2]
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// sumBy adds up the samples of metric whose labels match want, grouped by the label key ("" for one group).
func sumBy(samples []promSample, metric string, want map[string]string, key string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		if s.name != metric {
			continue
		}
		ok := true
		for k, v := range want {
			if s.labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			out[s.labels[key]] += s.value
		}
	}
	return out
}

// delta is after - before, per group.
func delta(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}

// controlPlaneQueues are KCM's queues the report shows: the controllers that finish a claim's and
// a volume's deletion.
var controlPlaneQueues = []string{"pvcprotection", "pvprotection"}

// controlPlane returns the report's lines about KCM and the apiserver during run r (none when the
// run has no scrapes).
func controlPlane(in string, r run) string {
	before, err1 := readProm(fmt.Sprintf("%s/%s-%s.cp-before.prom", in, r.key, r.arm))
	after, err2 := readProm(fmt.Sprintf("%s/%s-%s.cp-after.prom", in, r.key, r.arm))
	if err1 != nil || err2 != nil {
		return ""
	}
	var b strings.Builder
	var queues []string
	for _, q := range controlPlaneQueues {
		d := func(metric string) float64 {
			return delta(sumBy(before, metric, map[string]string{"name": q}, ""), sumBy(after, metric, map[string]string{"name": q}, ""))[""]
		}
		items := d("kcm_workqueue_work_duration_seconds_count")
		if items <= 0 {
			continue
		}
		waited, waits := d("kcm_workqueue_queue_duration_seconds_sum"), d("kcm_workqueue_queue_duration_seconds_count")
		queues = append(queues, fmt.Sprintf("%s %.0f items, mean wait in queue %s, mean work %s", q, items,
			ms(waited/max(waits, 1)), ms(d("kcm_workqueue_work_duration_seconds_sum")/items)))
	}
	if len(queues) > 0 {
		fmt.Fprintf(&b, "KCM's queues: %s. ", strings.Join(queues, "; "))
	}
	if verbs := meansBy(before, after, "kcm_rest_client_request_duration_seconds", "verb"); len(verbs) > 0 {
		fmt.Fprintf(&b, "KCM's requests (all its controllers, mean latency seen by KCM): %s. ", strings.Join(verbs, ", "))
	}
	if writes := apiserverWrites(before, after, r.binds()); writes != "" {
		fmt.Fprintf(&b, "Apiserver's own count of writes to PVs and claims (apiserver_request_total, every client; the workload's creates and deletes left out), per bind: %s. ", writes)
	}
	if flows := meansBy(before, after, "apiserver_flowcontrol_request_wait_duration_seconds", "flow_schema"); len(flows) > 0 {
		fmt.Fprintf(&b, "Apiserver priority and fairness, requests and mean wait by FlowSchema: %s.", strings.Join(flows, ", "))
	}
	if b.Len() == 0 {
		return ""
	}
	return fmt.Sprintf("\n%s, the control plane during the run: %s\n", r.arm, strings.TrimSpace(b.String()))
}

// meansBy returns "<key> <count> × <mean>" for each value of label key that histogram grew by
// between the scrapes, sorted.
func meansBy(before, after []promSample, histogram, key string) []string {
	sums := delta(sumBy(before, histogram+"_sum", nil, key), sumBy(after, histogram+"_sum", nil, key))
	counts := delta(sumBy(before, histogram+"_count", nil, key), sumBy(after, histogram+"_count", nil, key))
	var out []string
	for _, k := range sortedKeys(counts) {
		if counts[k] > 0 {
			out = append(out, fmt.Sprintf("%s %.0f × %s", k, counts[k], ms(sums[k]/counts[k])))
		}
	}
	return out
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func ms(seconds float64) string { return fmt.Sprintf("%.1f ms", seconds*1000) }

// apiserverWrites is "pv/status PUT 1.00, ..." from apiserver_request_total between the scrapes:
// updates and patches of PVs and claims by resource and subresource, per bind, the way a user
// without an audit log counts them. Creates and deletes are the workload's in every scenario
// but churn's, and left out.
func apiserverWrites(before, after []promSample, binds int) string {
	key := func(s promSample) string {
		r := shortResource(s.labels["resource"], s.labels["subresource"])
		return r + " " + s.labels["verb"]
	}
	sum := func(samples []promSample) map[string]float64 {
		out := map[string]float64{}
		for _, s := range samples {
			if s.name != "apiserver_request_total" || s.labels["dry_run"] != "" {
				continue
			}
			if res := s.labels["resource"]; res != "persistentvolumes" && res != "persistentvolumeclaims" {
				continue
			}
			if v := s.labels["verb"]; v != "PUT" && v != "PATCH" && v != "APPLY" {
				continue
			}
			out[key(s)] += s.value
		}
		return out
	}
	d := delta(sum(before), sum(after))
	if binds == 0 {
		return ""
	}
	var parts []string
	total := 0.0
	for _, k := range sortedKeys(d) {
		if d[k] > 0 {
			total += d[k]
			parts = append(parts, fmt.Sprintf("%s %.2f", k, d[k]/float64(binds)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("**%.2f** (%s)", total/float64(binds), strings.Join(parts, ", "))
}
