package main

// Where ours' CPU went: with PROFILE=1, hack/bench/bench.sh keeps a CPU profile of ours over each
// run (RUN.pprof, 20-second profiles merged). The report splits it into a few categories, each
// sample counted in the first one any frame of its stack matches, so the shares add up to 100% and
// the same profile always gives the same split.

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/google/pprof/profile"
)

// cpuCategories, in the order a stack is tested against them. The API writes come before the
// controller's syncs: a request made from a sync is client-go's cost, not the sync's.
var cpuCategories = []struct {
	name string
	re   *regexp.Regexp
}{
	{"the match (`findByClaim`, `FindMatchingVolume`)", regexp.MustCompile(`findByClaim|FindMatchingVolume`)},
	{"API writes: client-go's request, HTTP/2 write, TLS", regexp.MustCompile(`rest\.\(\*Request\)|http2\.\(\*ClientConn\)\.(RoundTrip|write|encode)|http2\.\(\*clientStream\)|http2\.\(\*Framer\)\.Write|net/http\.\(\*Transport\)`)},
	{"HTTP/2 and TLS read loop (answers, watch frames)", regexp.MustCompile(`http2\.\(\*clientConnReadLoop\)|http2\.\(\*ClientConn\)\.readLoop`)},
	{"watch decoding and the informers (their transform included)", regexp.MustCompile(`StreamWatcher|Reflector|DeltaFIFO|RealFIFO|processorListener|sharedIndexInformer|cache\.\(\*threadSafeMap\)|pv-controller-manager/pkg/compact`)},
	{"the controller's syncs, caches and queues", regexp.MustCompile(`controller/volume/persistentvolume|workqueue`)},
	{"garbage collection", regexp.MustCompile(`gcBgMarkWorker|gcDrain|gcAssist|bgsweep|bgscavenge|markroot|sweepone|gcStart`)},
	{"the Go scheduler and netpoll (goroutine wake-ups)", regexp.MustCompile(`runtime\.(schedule|findRunnable|netpoll|mcall|park_m|goexit0|wakep|startm|stopm|futex)`)},
}

// cpuProfileSplit is the report's paragraph for one run's profile; "" when the run has none.
func cpuProfileSplit(in string, r run) string {
	path := fmt.Sprintf("%s/%s-%s.pprof", in, r.key, r.arm)
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return fmt.Sprintf("%s, CPU profile: %s unreadable: %v.\n\n", r.arm, path, err)
	}
	total, shares := splitProfile(p)
	if total == 0 {
		return ""
	}
	parts := make([]string, 0, len(shares))
	for i, s := range shares {
		name := "other"
		if i < len(cpuCategories) {
			name = cpuCategories[i].name
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", name, 100*s/total))
	}
	return fmt.Sprintf("%s, where its CPU went (profile, %.1f CPU-seconds sampled; each sample in the first category its stack matches): %s.\n\n",
		r.arm, total, strings.Join(parts, ", "))
}

// splitProfile returns the profile's CPU seconds and, per category (then "other"), the seconds of
// the samples whose stack first matches it.
func splitProfile(p *profile.Profile) (total float64, shares []float64) {
	value := len(p.SampleType) - 1 // cpu nanoseconds, after samples/count
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			value = i
		}
	}
	shares = make([]float64, len(cpuCategories)+1)
	for _, s := range p.Sample {
		seconds := float64(s.Value[value]) / 1e9
		total += seconds
		shares[category(s)] += seconds
	}
	return total, shares
}

func category(s *profile.Sample) int {
	var frames []string
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function != nil {
				frames = append(frames, line.Function.Name)
			}
		}
	}
	stack := strings.Join(frames, "\n")
	for i, c := range cpuCategories {
		if c.re.MatchString(stack) {
			return i
		}
	}
	return len(cpuCategories)
}
