package main

import (
	"testing"

	"github.com/google/pprof/profile"
)

// A stack is counted once, in the first category any of its frames matches: a request made from
// a claim's sync is an API write, not the sync's own CPU.
func TestSplitProfileCountsEachSampleOnceInItsFirstCategory(t *testing.T) {
	fn := map[string]*profile.Function{}
	loc := func(names ...string) []*profile.Location {
		var locs []*profile.Location
		for _, n := range names {
			if fn[n] == nil {
				fn[n] = &profile.Function{ID: uint64(len(fn) + 1), Name: n}
			}
			locs = append(locs, &profile.Location{Line: []profile.Line{{Function: fn[n]}}})
		}
		return locs
	}
	sample := func(ms int64, names ...string) *profile.Sample {
		return &profile.Sample{Value: []int64{ms / 10, ms * 1e6}, Location: loc(names...)}
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			sample(300, "k8s.io/client-go/rest.(*Request).Do", "k8s.io/kubernetes/pkg/controller/volume/persistentvolume.(*PersistentVolumeController).syncClaim"),
			sample(200, "k8s.io/kubernetes/pkg/controller/volume/persistentvolume.(*PersistentVolumeController).syncClaim"),
			sample(100, "runtime.gcBgMarkWorker"),
			sample(400, "main.somethingElse"),
		},
	}
	total, shares := splitProfile(p)
	if total != 1.0 {
		t.Fatalf("total %.3f s, want 1.000", total)
	}
	want := map[int]float64{1: 0.3, 4: 0.2, 5: 0.1, len(cpuCategories): 0.4}
	for i, s := range shares {
		if d := s - want[i]; d > 1e-9 || d < -1e-9 {
			t.Errorf("category %d: %.3f s, want %.3f", i, s, want[i])
		}
	}
}
