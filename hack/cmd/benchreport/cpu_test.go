package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFormatCPU(t *testing.T) {
	got := formatCPU("ours", cpuUse{WallSeconds: 100, Cores: 2, MachineBusySeconds: 190,
		ByProcess: map[string]float64{"etcd": 30, "kube-apiserver": 100, "pv-controller-manager": 20}})
	want := "ours, CPU during the run (2 cores x 100.0 s = 200 core-seconds): busy **95%**; kube-apiserver 100.0 s (50%), etcd 30.0 s (15%), pv-controller-manager 20.0 s (10%), the rest (load generator, system) 40.0 s (20%).\n\n"
	if got != want {
		t.Errorf("formatCPU:\n got %q\nwant %q", got, want)
	}
	if got := formatCPU("ours", cpuUse{}); got != "" {
		t.Errorf("formatCPU of an empty run = %q, want \"\"", got)
	}
}

func TestBinderCPUPerBind(t *testing.T) {
	in := t.TempDir()
	write := func(arm, body string) {
		if err := os.WriteFile(filepath.Join(in, "matched-n1000-qps1000-"+arm+".cpu.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("upstream", `{"wallSeconds": 60, "cores": 2, "byProcess": {"kube-controller-manager": 9.0}}`)
	write("ours", `{"wallSeconds": 30, "cores": 2, "byProcess": {"kube-controller-manager": 4.0, "pv-controller-manager": 2.5}}`)
	ours := run{key: "matched-n1000-qps1000", arm: "ours", hasMeta: true, meta: meta{CPUSeconds: 2.5}}
	ours.result.Count = 1000
	up := run{key: "matched-n1000-qps1000", arm: "upstream", hasMeta: true, meta: meta{CPUSeconds: 9.0}}
	up.result.Count, up.result.Unbound = 1000, 500 // per claim bound, not per claim
	if ms, _, ok := binderCPUPerBind(in, ours, &ours); !ok || ms != 2.5 {
		t.Errorf("ours: %v ms (%v), want 2.5: the binder's 2.5 s over 1000 binds", ms, ok)
	}
	if ms, _, ok := binderCPUPerBind(in, up, &ours); !ok || ms != 10 {
		t.Errorf("upstream: %v ms (%v), want 10: KCM's 9 s less KCM's 4 s without its binder, over 500 binds", ms, ok)
	}
	if _, _, ok := binderCPUPerBind(in, up, nil); ok {
		t.Error("upstream without ours' run: an estimate, want none")
	}
}
