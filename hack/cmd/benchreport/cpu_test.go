package main

import "testing"

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
