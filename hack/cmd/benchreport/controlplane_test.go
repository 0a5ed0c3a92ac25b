package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestControlPlaneDeltas(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("churn-n10-qps1000-ours.cp-before.prom", `kcm_workqueue_queue_duration_seconds_sum{name="pvcprotection"} 1
kcm_workqueue_queue_duration_seconds_count{name="pvcprotection"} 10
kcm_workqueue_work_duration_seconds_sum{name="pvcprotection"} 0.5
kcm_workqueue_work_duration_seconds_count{name="pvcprotection"} 10
kcm_rest_client_request_duration_seconds_sum{host="x",verb="PUT"} 1
kcm_rest_client_request_duration_seconds_count{host="x",verb="PUT"} 10
apiserver_flowcontrol_request_wait_duration_seconds_sum{execute="true",flow_schema="exempt",priority_level="exempt"} 0
apiserver_flowcontrol_request_wait_duration_seconds_count{execute="true",flow_schema="exempt",priority_level="exempt"} 5
`)
	write("churn-n10-qps1000-ours.cp-after.prom", `kcm_workqueue_queue_duration_seconds_sum{name="pvcprotection"} 21
kcm_workqueue_queue_duration_seconds_count{name="pvcprotection"} 20
kcm_workqueue_work_duration_seconds_sum{name="pvcprotection"} 1.5
kcm_workqueue_work_duration_seconds_count{name="pvcprotection"} 20
kcm_rest_client_request_duration_seconds_sum{host="x",verb="PUT"} 3
kcm_rest_client_request_duration_seconds_count{host="x",verb="PUT"} 30
apiserver_flowcontrol_request_wait_duration_seconds_sum{execute="true",flow_schema="exempt",priority_level="exempt"} 0
apiserver_flowcontrol_request_wait_duration_seconds_count{execute="true",flow_schema="exempt",priority_level="exempt"} 15
`)
	got := controlPlane(dir, run{key: "churn-n10-qps1000", arm: "ours"})
	for _, want := range []string{"pvcprotection 10 items, mean wait in queue 2000.0 ms, mean work 100.0 ms", "PUT 20 × 100.0 ms", "exempt 10 × 0.0 ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("report %q lacks %q", got, want)
		}
	}
	if controlPlane(dir, run{key: "churn-n10-qps1000", arm: "upstream"}) != "" {
		t.Error("a run without scrapes reports something")
	}
}

// Variants (bench.sh's ARMS="ours+NAME" or "upstream+NAME") are runs of their own arm.
func TestRunFileArms(t *testing.T) {
	for name, want := range map[string]string{
		"churn-n1000-qps1000-upstream.json":      "upstream",
		"churn-n1000-qps1000-ours.json":          "ours",
		"churn-n1000-qps1000-ours+admin.json":    "ours+admin",
		"churn-n1000-qps1000-upstream+gate.json": "upstream+gate",
		"churn-n1000-qps1000-ours.meta.json":     "",
		"churn-n1000-qps1000-theirs.json":        "",
	} {
		got := ""
		if m := runFile.FindStringSubmatch(name); m != nil {
			got = m[2]
		}
		if got != want {
			t.Errorf("%s: arm %q, want %q (\"\": not a run)", name, got, want)
		}
	}
}

func TestUpstreamVariantsSortWithUpstream(t *testing.T) {
	for arm, want := range map[string]bool{"upstream": true, "upstream+gate": true, "ours": false, "ours+admin": false, "upstreamish": false} {
		if got := isUpstream(arm); got != want {
			t.Errorf("isUpstream(%q) = %v, want %v", arm, got, want)
		}
	}
}
