package main

import (
	"testing"
	"time"

	"github.com/fastpv/pv-controller-manager/test/harness/loadgen/result"
)

func TestFloor(t *testing.T) {
	tests := []struct {
		name string
		r    run
		want time.Duration
	}{
		// 1000 pairs: the result says 2000 creates + 4000 bind writes; at 500/s.
		{"prebound, apiserver-bound", run{result: result.Result{Scenario: "prebound", Count: 1000, WritesAfterStart: 6000}, meta: meta{QPS: "1000"}}, 12 * time.Second},
		// 200 PVs + 800 bind writes at 500/s.
		{"pvc-first", run{result: result.Result{Scenario: "pvc-first", Count: 200, WritesAfterStart: 1000}, meta: meta{QPS: "1000"}}, 2 * time.Second},
		// (4000 - 20 burst) writes at 20 QPS is longer than 12 s.
		{"prebound, QPS-bound", run{result: result.Result{Scenario: "prebound", Count: 1000, WritesAfterStart: 6000}, meta: meta{QPS: "20"}}, 199 * time.Second},
		// No meta (older runs): the ceiling alone.
		{"matched, no meta", run{result: result.Result{Scenario: "matched", Count: 1000, WritesAfterStart: 5000}}, 10 * time.Second},
	}
	for _, tc := range tests {
		if got := floorOf(tc.r, 500); got != tc.want {
			t.Errorf("%s: floor %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	r := result.Result{Samples: []sample{{Latency: 3 * time.Second}, {Latency: time.Second}, {Latency: 2 * time.Second}, {Latency: 4 * time.Second}}}
	for p, want := range map[float64]time.Duration{0.5: 2 * time.Second, 0.99: 4 * time.Second, 1: 4 * time.Second} {
		if got := pct(r, p); got != want {
			t.Errorf("p%v = %s, want %s", p*100, got, want)
		}
	}
}
