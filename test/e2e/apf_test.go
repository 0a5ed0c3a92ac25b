package e2e

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	v1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The binder's FlowSchemas (deploy/rbac/flowschemas.yaml) and the priority level each must reach.
var binderFlowSchemas = map[string]string{
	"pv-controller-manager":                 "workload-high",
	"pv-controller-manager-leader-election": "leader-election",
}

var _ = Describe("API priority and fairness", Label("apf"), func() {
	BeforeEach(func() {
		if os.Getenv("E2E_BINDER_IDENTITY") == "admin" {
			Skip("the binder runs as the cluster's admin (BINDER_IDENTITY=admin): exempt, no FlowSchema of its own")
		}
	})

	It("has the binder's FlowSchemas in place, each pointing at an existing priority level", func(ctx SpecContext) {
		for name, level := range binderFlowSchemas {
			Eventually(ctx, func() error {
				fs, err := client.FlowcontrolV1().FlowSchemas().Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if fs.Spec.PriorityLevelConfiguration.Name != level {
					return StopTrying(fmt.Sprintf("FlowSchema %s: priority level %s, want %s", name, fs.Spec.PriorityLevelConfiguration.Name, level))
				}
				for _, c := range fs.Status.Conditions {
					if c.Type == flowcontrolv1.FlowSchemaConditionDangling && c.Status == flowcontrolv1.ConditionFalse {
						return nil
					}
				}
				return fmt.Errorf("FlowSchema %s: the apiserver has not said Dangling=False yet: %+v", name, fs.Status.Conditions)
			}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		}
	})

	// One apiserver (the local cluster): its counters see every request of the binder.
	It("dispatches the binder's requests through its own FlowSchemas, not as exempt", Label("local"), func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "apf", "1Gi", ""))
		createClaim(ctx, claim(ns, "apf", "1Gi", "", pv.Name))
		Eventually(ctx, getClaim(ctx, ns, "apf")).WithTimeout(30 * time.Second).Should(claimPhase(v1.ClaimBound))
		for name, level := range binderFlowSchemas {
			Eventually(ctx, func() (float64, error) {
				return dispatched(ctx, name, level)
			}).WithTimeout(30*time.Second).WithPolling(time.Second).Should(BeNumerically(">", 0),
				"requests dispatched by FlowSchema %s at %s", name, level)
		}
	})
})

// dispatched reads apiserver_flowcontrol_dispatched_requests_total for one FlowSchema and level
// from the apiserver's /metrics.
func dispatched(ctx context.Context, flowSchema, level string) (float64, error) {
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	re := regexp.MustCompile(`(?m)^apiserver_flowcontrol_dispatched_requests_total\{flow_schema="` + regexp.QuoteMeta(flowSchema) +
		`",priority_level="` + regexp.QuoteMeta(level) + `"\} (\S+)$`)
	m := re.FindSubmatch(body)
	if m == nil {
		return 0, nil
	}
	return strconv.ParseFloat(string(m[1]), 64)
}
