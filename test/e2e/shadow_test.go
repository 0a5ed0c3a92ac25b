package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
)

// Shadow mode (docs/operators/shadow.md), on a cluster whose KCM runs its own binder and ours runs
// with --shadow (make e2e-shadow):
//
//	E2E_SHADOW=1         the cluster is such a cluster (the spec skips otherwise)
//	E2E_METRICS_URL      our /metrics
//	E2E_AUDIT_LOG        the apiserver's audit log of PV and PVC writes
//	E2E_PVC_WHY          bin/kubectl-pvc_why: --shadow must report the same outcomes
var _ = Describe("shadow mode beside KCM's binder", Label("shadow"), func() {
	It("compares every claim, never disagrees where the choice is unique, and stores nothing", func(ctx SpecContext) {
		if os.Getenv("E2E_SHADOW") == "" {
			Skip("set E2E_SHADOW=1 on a cluster where KCM binds and ours runs with --shadow (make e2e-shadow)")
		}
		url, auditLog := os.Getenv("E2E_METRICS_URL"), os.Getenv("E2E_AUDIT_LOG")
		Expect(url).NotTo(BeEmpty(), "E2E_METRICS_URL")
		Expect(auditLog).NotTo(BeEmpty(), "E2E_AUDIT_LOG")
		ns := newNamespace(ctx)
		token := metricsReaderToken(ctx, ns)
		outcomes := func() map[string]float64 { return shadowOutcomes(scrapeMetrics(ctx, url, token)) }
		var before map[string]float64
		Eventually(ctx, outcomes).WithTimeout(30 * time.Second).Should(HaveKey("agree"))
		before = outcomes()

		// Pre-bound pair.
		pb := createVolume(ctx, volume(ns, "pb", "1Gi", ""))
		createClaim(ctx, claim(ns, "pb", "1Gi", "", pb.Name))
		// A PV reserving its claim by claimRef.
		ref := volume(ns, "ref", "1Gi", "")
		ref.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: "ref"}
		createVolume(ctx, ref)
		createClaim(ctx, claim(ns, "ref", "1Gi", "", ""))
		// Matched: the only volume of its class.
		createVolume(ctx, volume(ns, "m", "3Gi", "shadow-e2e-"+ns))
		createClaim(ctx, claim(ns, "m", "2Gi", "shadow-e2e-"+ns, ""))
		// A claim pre-bound to a volume that comes later.
		createClaim(ctx, claim(ns, "late", "1Gi", "", ns+"-late"))
		// A claim pre-bound to a volume that does not fit it: both binders leave it Pending.
		small := createVolume(ctx, volume(ns, "small", "1Gi", ""))
		createClaim(ctx, claim(ns, "misfit", "5Gi", "", small.Name))
		Eventually(ctx, getClaim(ctx, ns, "pb")).WithTimeout(2 * time.Minute).Should(claimPhase(v1.ClaimBound))
		createVolume(ctx, volume(ns, "late", "1Gi", ""))

		for _, name := range []string{"pb", "ref", "m", "late"} {
			Eventually(ctx, getClaim(ctx, ns, name)).WithTimeout(2*time.Minute).Should(claimPhase(v1.ClaimBound), "KCM's binder binds %s", name)
		}
		// Each choice is unique: ours agrees, or KCM's binder, racing it, bound first (only-kcm).
		compared := func() float64 {
			now := outcomes()
			return now["agree"] - before["agree"] + now["only-kcm"] - before["only-kcm"]
		}
		Eventually(ctx, compared).WithTimeout(time.Minute).Should(BeNumerically(">=", 4), "the four claims compared")
		after := outcomes()
		Expect(after["agree"]-before["agree"]).To(BeNumerically(">=", 1), "ours decided first on at least one claim")
		for _, o := range []string{"disagree", "disagree-legitimate", "only-ours"} {
			Expect(after[o]-before[o]).To(BeZero(), "outcome %s", o)
		}
		Consistently(ctx, getClaim(ctx, ns, "misfit")).WithTimeout(3 * time.Second).Should(claimPhase(v1.ClaimPending))
		Expect(eventReasons(ctx, ns, "misfit")()).NotTo(ContainElement("ShadowDisagreement"))

		// kubectl pvc-why --shadow reads the same comparisons from the binder's events.
		if pvcWhy := os.Getenv("E2E_PVC_WHY"); pvcWhy != "" {
			type summary struct{ Outcomes map[string]int } // pvc-why's ShadowSummary, the part read here
			Eventually(ctx, func() (summary, error) {
				var s summary
				out, err := exec.CommandContext(ctx, pvcWhy, "--shadow", "-n", ns, "-o", "json").Output()
				if err != nil {
					return s, err
				}
				return s, json.Unmarshal(out, &s)
			}).WithTimeout(30*time.Second).Should(HaveField("Outcomes", SatisfyAll(
				HaveKeyWithValue("agree", BeNumerically("==", after["agree"]-before["agree"])),
				HaveKeyWithValue("only-kcm", BeNumerically("==", after["only-kcm"]-before["only-kcm"])),
				HaveKeyWithValue("disagree", 0))), "pvc-why --shadow: the same outcomes as the metrics")
		}

		// The audit log: ours (user agent pv-controller-manager) wrote PVs and claims only as dry runs.
		stored, dry, accepted := shadowWrites(auditLog, ns)
		Expect(dry).To(BeNumerically(">", 0), "ours' dry-run writes appear in the audit log")
		Expect(stored).To(BeEmpty(), "writes by ours without dryRun=All")
		// Each decision once: the pre-bound pair's bind is 4 writes (the volume, its status, the claim,
		// its status); a write the apiserver accepted is not sent again when ours syncs the pair again.
		Expect(accepted[pb.Name]+accepted["pb"]).To(BeNumerically("<=", 4), "ours' accepted dry-run writes of the pre-bound pair: %v", accepted)
		pv, err := getVolume(ctx, pb.Name)()
		Expect(err).NotTo(HaveOccurred())
		for _, m := range pv.ManagedFields {
			Expect(m.Manager).NotTo(HavePrefix("pv-controller-manager"), "a field of %s managed by ours", pv.Name)
		}
	})
})

var shadowOutcome = regexp.MustCompile(`(?m)^pv_controller_shadow_decisions_total\{outcome="([a-z-]+)"\} ([0-9.e+]+)$`)

func shadowOutcomes(metrics string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range shadowOutcome.FindAllStringSubmatch(metrics, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		out[m[1]] = v
	}
	return out
}

// shadowWrites reads the audit log: ours' PV and claim writes touching ns, those stored (no dry run),
// the count of dry runs, and the dry runs the apiserver accepted (2xx) by object name.
func shadowWrites(path, ns string) (stored []string, dry int, accepted map[string]int) {
	accepted = map[string]int{}
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		var ev struct {
			RequestURI string `json:"requestURI"`
			UserAgent  string `json:"userAgent"`
			Verb       string `json:"verb"`
			ObjectRef  struct {
				Namespace, Name string
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if json.Unmarshal(scanner.Bytes(), &ev) != nil || !strings.HasPrefix(ev.UserAgent, "pv-controller-manager") {
			continue
		}
		if ev.ObjectRef.Namespace != ns && !strings.HasPrefix(ev.ObjectRef.Name, ns+"-") {
			continue
		}
		if strings.Contains(ev.RequestURI, "dryRun=All") {
			dry++
			if ev.ResponseStatus.Code >= 200 && ev.ResponseStatus.Code < 300 {
				accepted[ev.ObjectRef.Name]++
			}
		} else {
			stored = append(stored, ev.Verb+" "+ev.RequestURI)
		}
	}
	Expect(scanner.Err()).NotTo(HaveOccurred())
	return stored, dry, accepted
}
