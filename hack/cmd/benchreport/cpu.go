package main

// Where the machine's cores went during a run: hack/bench/bench.sh writes RUN.cpu.json (CPU
// seconds of each control-plane process, our binder and the whole machine, /proc, from before the
// load to after it), so a run that falls short of the apiserver's floor shows who had the cores.

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

type cpuUse struct {
	WallSeconds        float64            `json:"wallSeconds"`
	Cores              int                `json:"cores"`
	MachineBusySeconds float64            `json:"machineBusySeconds"`
	ByProcess          map[string]float64 `json:"byProcess"`
}

// cpuDuringRun is the report's line for one run; "" when the run has no RUN.cpu.json (runs made
// before it existed).
func cpuDuringRun(in string, r run) string {
	u, ok := readCPU(in, r)
	if !ok {
		return ""
	}
	return formatCPU(r.arm, u)
}

func formatCPU(arm string, u cpuUse) string {
	capacity := u.WallSeconds * float64(u.Cores)
	if capacity <= 0 {
		return ""
	}
	names := slices.SortedFunc(maps.Keys(u.ByProcess), func(a, b string) int {
		return cmp.Or(cmp.Compare(u.ByProcess[b], u.ByProcess[a]), strings.Compare(a, b))
	})
	var parts []string
	rest := u.MachineBusySeconds
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f s (%.0f%%)", name, u.ByProcess[name], 100*u.ByProcess[name]/capacity))
		rest -= u.ByProcess[name]
	}
	parts = append(parts, fmt.Sprintf("the rest (load generator, system) %.1f s (%.0f%%)", max(rest, 0), 100*max(rest, 0)/capacity))
	return fmt.Sprintf("%s, CPU during the run (%d cores x %.1f s = %.0f core-seconds): busy **%.0f%%**; %s.\n\n",
		arm, u.Cores, u.WallSeconds, capacity, 100*u.MachineBusySeconds/capacity, strings.Join(parts, ", "))
}

// readCPU returns the run's RUN.cpu.json, found false for runs made before it existed.
func readCPU(in string, r run) (cpuUse, bool) {
	path := fmt.Sprintf("%s/%s-%s.cpu.json", in, r.key, r.arm)
	if _, err := os.Stat(path); err != nil {
		return cpuUse{}, false
	}
	var u cpuUse
	mustRead(path, &u)
	return u, true
}

// binderCPUPerBind is the binder's CPU seconds per bound claim in a run, in milliseconds, and how
// it was found. Ours: the binder process's CPU over the run (meta). Upstream's binder runs inside
// KCM: KCM's CPU in upstream's run less KCM's in ours' run of the same scenario, where KCM runs
// every controller but the binder; so it is an estimate, and absent without ours' run.
func binderCPUPerBind(in string, r run, ours *run) (ms float64, how string, ok bool) {
	if !r.hasMeta || r.binds() == 0 {
		return 0, "", false
	}
	if !isUpstream(r.arm) {
		return 1000 * r.meta.CPUSeconds / float64(r.binds()), "binder process", true
	}
	if ours == nil {
		return 0, "", false
	}
	up, okUp := readCPU(in, r)
	own, okOurs := readCPU(in, *ours)
	kcmUp, inUp := up.ByProcess["kube-controller-manager"]
	kcmOurs, inOurs := own.ByProcess["kube-controller-manager"]
	if !okUp || !okOurs || !inUp || !inOurs {
		return 0, "", false
	}
	return 1000 * max(kcmUp-kcmOurs, 0) / float64(r.binds()), "KCM less KCM without its binder", true
}
