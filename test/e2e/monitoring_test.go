package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
)

// metricsUsed is deploy/monitoring/metrics-used.txt: what the alerts and the dashboard read.
const metricsUsed = "../../deploy/monitoring/metrics-used.txt"

var _ = Describe("monitoring mixin", Label("monitoring"), func() {
	It("reads only series a running binder exports, with the labels it selects and groups by", func(ctx SpecContext) {
		url := os.Getenv("E2E_METRICS_URL")
		if url == "" {
			Skip("set E2E_METRICS_URL to pv-controller-manager's /metrics")
		}
		origins := map[string]bool{"binder": true}
		if os.Getenv("E2E_SHADOW") == "1" {
			origins["shadow"] = true
		}
		wanted := readMetricsUsed(origins)
		Expect(wanted).NotTo(BeEmpty(), "%s lists no series", metricsUsed)

		ns := newNamespace(ctx)
		// Something for every gauge to count: a bind, a volume nobody claims and a claim nothing
		// fits (upstream's pv_collector reports only counts above zero).
		pv := createVolume(ctx, volume(ns, "monitored", "1Gi", ""))
		createClaim(ctx, claim(ns, "monitored", "1Gi", "", pv.Name))
		createVolume(ctx, volume(ns, "spare", "1Gi", "e2e-monitoring-spare"))
		createClaim(ctx, claim(ns, "unmatched", "1Gi", "e2e-monitoring-none", ""))
		if os.Getenv("E2E_SHADOW") != "1" {
			Eventually(ctx, getClaim(ctx, ns, "monitored")).WithTimeout(30 * time.Second).Should(claimPhase(v1.ClaimBound))
		}
		token := metricsReaderToken(ctx, ns)
		Eventually(ctx, func() []string {
			return missingSeries(scrapeMetrics(ctx, url, token), wanted)
		}).WithTimeout(60*time.Second).WithPolling(time.Second).Should(BeEmpty(),
			"series of %s that the binder at %s does not export (name, or a label)", metricsUsed, url)
	})
})

// readMetricsUsed returns, for every series of the given origins, the label names it must carry.
func readMetricsUsed(origins map[string]bool) map[string][]string {
	data, err := os.ReadFile(metricsUsed)
	Expect(err).NotTo(HaveOccurred())
	wanted := map[string][]string{}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") || !origins[fields[1]] {
			continue
		}
		wanted[fields[0]] = fields[2:]
	}
	return wanted
}

var labelName = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"`)

// missingSeries returns "name" for each wanted series name absent from the exposition, and
// "name{label}" for each wanted label no series of that name carries.
func missingSeries(exposition string, wanted map[string][]string) []string {
	labelsOf := map[string]map[string]bool{}
	for _, line := range strings.Split(exposition, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, "{")
		if !strings.Contains(line, "{") || strings.Index(line, " ") < strings.Index(line, "{") {
			name, rest = strings.Fields(line)[0], ""
		}
		if labelsOf[name] == nil {
			labelsOf[name] = map[string]bool{}
		}
		for _, m := range labelName.FindAllStringSubmatch(rest, -1) {
			labelsOf[name][m[1]] = true
		}
	}
	var missing []string
	for name, labels := range wanted {
		have, ok := labelsOf[name]
		if !ok {
			missing = append(missing, name)
			continue
		}
		for _, l := range labels {
			if !have[l] {
				missing = append(missing, fmt.Sprintf("%s{%s}", name, l))
			}
		}
	}
	return missing
}
