package main

// Writes to PVs and claims by client: who pays for a bind besides the binder. The bench counts the
// binder's writes by its user agent; a user asking for 4.00 writes per bind counts every
// client's (apiserver_request_total), which includes KCM's pvc-protection controller writing its
// Unused condition on each Bound claim (feature PersistentVolumeClaimUnusedSinceTime). These lines
// tell the two apart, from the audit log (hack/bench/bench.sh: SCENARIO-...-ARM.writes.json) or,
// with the audit log off, from the binders' and the apiserver's own counters.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// auditEvent is the part of an audit.k8s.io/v1 Event the count needs.
type auditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// writeCounts is, per client, per "resource[/subresource] verb", the number of writes; a 409 also
// counts under "... verb 409".
type writeCounts map[string]map[string]int

// clientOf names the client behind a user agent: the controller name client-go's AddUserAgent
// appends ("kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc/pvc-protection-controller"
// -> pvc-protection-controller; the binder in both arms is persistent-volume-binder), else the program.
func clientOf(userAgent string) string {
	fields := strings.Fields(userAgent)
	if len(fields) > 0 {
		if parts := strings.Split(fields[len(fields)-1], "/"); len(parts) >= 3 && parts[2] != "" {
			return strings.Join(parts[2:], "/")
		}
	}
	program, _, _ := strings.Cut(userAgent, "/")
	if program == "" {
		return "unknown"
	}
	return program
}

func shortResource(resource, subresource string) string {
	r := map[string]string{"persistentvolumes": "pv", "persistentvolumeclaims": "pvc"}[resource]
	if r == "" {
		r = resource
	}
	if subresource != "" {
		r += "/" + subresource
	}
	return r
}

// countAuditWrites reads an audit log (one JSON event per line, ResponseComplete stage only, as
// hack/cluster/local-up.sh's policy writes it) and counts its writes.
func countAuditWrites(path string) (writeCounts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	counts := writeCounts{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		switch e.Verb {
		case "create", "update", "patch", "delete":
		default:
			continue
		}
		client := clientOf(e.UserAgent)
		if counts[client] == nil {
			counts[client] = map[string]int{}
		}
		key := shortResource(e.ObjectRef.Resource, e.ObjectRef.Subresource) + " " + e.Verb
		counts[client][key]++
		if e.ResponseStatus.Code == 409 {
			counts[client][key+" 409"]++
		}
	}
	return counts, sc.Err()
}

// writesByClient is the report's line for one run: per client other than the load generator, its
// writes per bind by resource, from SCENARIO-...-ARM.writes.json; "" when the run has none.
func writesByClient(in string, r run) string {
	var counts writeCounts
	path := fmt.Sprintf("%s/%s-%s.writes.json", in, r.key, r.arm)
	if _, err := os.Stat(path); err != nil || r.binds() == 0 {
		return ""
	}
	mustRead(path, &counts)
	n := float64(r.binds())
	var parts []string
	for _, client := range slices.Sorted(maps.Keys(counts)) {
		if client == "pv-load" {
			continue // the workload's own creates and deletes
		}
		var items []string
		total := 0
		for _, key := range slices.Sorted(maps.Keys(counts[client])) {
			if strings.HasSuffix(key, " 409") {
				continue
			}
			c := counts[client][key]
			total += c
			item := fmt.Sprintf("%s %.2f", key, float64(c)/n)
			if conflicts := counts[client][key+" 409"]; conflicts > 0 {
				item += fmt.Sprintf(" (%d 409s)", conflicts)
			}
			items = append(items, item)
		}
		parts = append(parts, fmt.Sprintf("%s **%.2f** (%s)", client, float64(total)/n, strings.Join(items, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("\n%s, writes to PVs and claims per bind by client (audit log; the workload's own left out): %s.\n",
		r.arm, strings.Join(parts, "; "))
}
