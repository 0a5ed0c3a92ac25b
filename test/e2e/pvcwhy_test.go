package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// whyReport is the part of `kubectl pvc-why -o json` the specs check.
type whyReport struct {
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Verdict    string `json:"verdict"`
	Summary    string `json:"summary"`
	Volume     string `json:"volume"`
	OK         bool   `json:"ok"`
	Candidates []struct {
		Name    string   `json:"name"`
		Reasons []string `json:"reasons"`
	} `json:"candidates"`
	Resize *struct {
		State             string `json:"state"`
		Summary           string `json:"summary"`
		ExpansionRejected string `json:"expansionRejected"`
	} `json:"resize"`
	Binder struct {
		Known     bool   `json:"known"`
		Ours      string `json:"ours"`
		Summary   string `json:"summary"`
		LastEvent *struct {
			Reason string `json:"reason"`
		} `json:"lastEvent"`
	} `json:"binder"`
}

// pvcWhy runs the plugin binary against the cluster under test and decodes its JSON verdict;
// the exit code must agree with it (0 exactly when the claim is OK).
func pvcWhy(ctx context.Context, ns, name string) func() (whyReport, error) {
	return func() (whyReport, error) {
		var r whyReport
		cmd := exec.CommandContext(ctx, os.Getenv("E2E_PVC_WHY"), name, "-n", ns, "-o", "json")
		out, err := cmd.Output()
		code := 0
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitCode()
		} else if err != nil {
			return r, err
		}
		if code == 2 {
			return r, fmt.Errorf("kubectl pvc-why failed: %s", exitErr.Stderr)
		}
		if err := json.Unmarshal(out, &r); err != nil {
			return r, fmt.Errorf("decoding %q: %w", out, err)
		}
		if r.OK != (code == 0) {
			return r, fmt.Errorf("exit code %d with ok=%v", code, r.OK)
		}
		return r, nil
	}
}

func verdict(v string) OmegaMatcher { return HaveField("Verdict", v) }

// newStorageClass creates a cluster-wide class for one spec and deletes it afterwards.
func newStorageClass(ctx context.Context, name, provisioner string, mode storagev1.VolumeBindingMode, expand bool) {
	_, err := client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: name},
		Provisioner:          provisioner,
		VolumeBindingMode:    &mode,
		AllowVolumeExpansion: ptr.To(expand),
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		_ = client.StorageV1().StorageClasses().Delete(ctx, name, metav1.DeleteOptions{})
	})
}

const noProvisioner = "kubernetes.io/no-provisioner"

var _ = Describe("kubectl pvc-why", Label("pvc-why"), func() {
	BeforeEach(func() {
		if os.Getenv("E2E_PVC_WHY") == "" {
			Skip("set E2E_PVC_WHY to bin/kubectl-pvc_why")
		}
	})
	const wait = 30 * time.Second

	It("says Bound for a bound pair, and that our binder holds its Lease and acted", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "pv", "1Gi", ""))
		createClaim(ctx, claim(ns, "data", "1Gi", "", pv.Name))
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			verdict("Bound"), HaveField("OK", true), HaveField("Volume", pv.Name),
			HaveField("Summary", ContainSubstring("pre-bound by spec.volumeName")),
			HaveField("Binder.Ours", Not(BeEmpty())),
			HaveField("Binder.Summary", ContainSubstring("pv-controller-manager is running"))))
	})

	It("names a missing pre-bound PV, and says Bound once it is created", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		createClaim(ctx, claim(ns, "data", "1Gi", "", ns+"-later"))
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			verdict("PreboundVolumeMissing"), HaveField("Volume", ns+"-later"),
			HaveField("Binder.LastEvent.Reason", "FailedBinding")))
		createVolume(ctx, volume(ns, "later", "1Gi", ""))
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(verdict("Bound"))
	})

	It("names each mismatch of a pre-bound PV that does not fit", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pv := volume(ns, "small", "1Gi", "gold", v1.ReadOnlyMany)
		createVolume(ctx, pv)
		createClaim(ctx, claim(ns, "data", "5Gi", "", pv.Name))
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			verdict("PreboundVolumeMismatch"),
			HaveField("Summary", And(ContainSubstring("capacity 1Gi is less than the requested 5Gi"),
				ContainSubstring(`storageClassName "gold", the claim asks for ""`),
				ContainSubstring("accessModes [ReadOnlyMany] lack [ReadWriteOnce]")))))
	})

	It("names the other claim of a pre-bound PV", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "pv", "1Gi", ""))
		createClaim(ctx, claim(ns, "owner", "1Gi", "", pv.Name))
		Eventually(ctx, getClaim(ctx, ns, "owner")).WithTimeout(wait).Should(claimPhase(v1.ClaimBound))
		createClaim(ctx, claim(ns, "late", "1Gi", "", pv.Name))
		Eventually(ctx, pvcWhy(ctx, ns, "late")).WithTimeout(wait).Should(And(
			verdict("PreboundVolumeClaimedByOther"), HaveField("Summary", ContainSubstring("claim "+ns+"/owner"))))
	})

	It("says a Released Retain PV needs an operator, and Bound once its claimRef is cleared", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "kept", "1Gi", ""))
		createClaim(ctx, claim(ns, "data", "1Gi", "", pv.Name))
		Eventually(ctx, getClaim(ctx, ns, "data")).WithTimeout(wait).Should(claimPhase(v1.ClaimBound))
		Expect(client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "data", metav1.DeleteOptions{})).To(Succeed())
		Eventually(ctx, getVolume(ctx, pv.Name)).WithTimeout(wait).Should(HaveField("Status.Phase", v1.VolumeReleased))
		Eventually(ctx, func() error {
			_, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("claim still there: %v", err)
		}).WithTimeout(wait).Should(Succeed())
		createClaim(ctx, claim(ns, "data", "1Gi", "", pv.Name))
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			verdict("VolumeReleasedNeedsOperator"), HaveField("Summary", ContainSubstring("reclaim policy Retain"))))

		// What the verdict tells the operator to do.
		_, err := client.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.MergePatchType, []byte(`{"spec":{"claimRef":null}}`), metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(verdict("Bound"))
	})

	It("says why a PV reserving the claim by claimRef does not fit it", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		newStorageClass(ctx, ns, noProvisioner, storagev1.VolumeBindingImmediate, false)
		pv := volume(ns, "reserved", "1Gi", ns)
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: ns, Name: "data"}
		createVolume(ctx, pv)
		createClaim(ctx, claim(ns, "data", "2Gi", ns, ""))
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			verdict("ReservedVolumeMismatch"), HaveField("Volume", pv.Name),
			HaveField("Summary", ContainSubstring("capacity 1Gi is less than the requested 2Gi"))))
	})

	It("lists the nearest PVs and why the binder rejects each when none matches", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		newStorageClass(ctx, ns, noProvisioner, storagev1.VolumeBindingImmediate, false)
		createVolume(ctx, volume(ns, "small", "1Gi", ns))
		createVolume(ctx, volume(ns, "rox", "10Gi", ns, v1.ReadOnlyMany))
		labelled := volume(ns, "slow", "10Gi", ns)
		labelled.Labels["tier"] = "slow"
		createVolume(ctx, labelled)
		pvc := claim(ns, "data", "5Gi", ns, "")
		pvc.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fast"}}
		createClaim(ctx, pvc)
		reasons := func(r whyReport) string {
			var all []string
			for _, c := range r.Candidates {
				all = append(all, c.Name+": "+strings.Join(c.Reasons, "; "))
			}
			return strings.Join(all, "\n")
		}
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			verdict("NoMatchingVolume"),
			HaveField("Summary", ContainSubstring("the class provisions nothing")),
			WithTransform(reasons, And(
				ContainSubstring(ns+"-small: capacity 1Gi is less than the requested 5Gi"),
				ContainSubstring(ns+"-rox: accessModes [ReadOnlyMany] lack [ReadWriteOnce]"),
				ContainSubstring(ns+"-slow: labels {e2e-namespace="+ns+",tier=slow} do not match the claim's selector tier=fast"),
				Not(ContainSubstring("disagree"))))))
	})

	It("follows a WaitForFirstConsumer claim: no pod, pod not scheduled, then Bound once a PV fits", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		newStorageClass(ctx, ns, noProvisioner, storagev1.VolumeBindingWaitForFirstConsumer, false)
		createClaim(ctx, claim(ns, "data", "1Gi", ns, ""))
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(verdict("WaitForFirstConsumer"))

		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
			Spec: v1.PodSpec{
				Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
				Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
					PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
				Tolerations: []v1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}},
			},
		}
		_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			verdict("WaitForPodScheduled"), HaveField("Summary", ContainSubstring("pod app"))))

		// The scheduler reserves a fitting PV (claimRef), the binder completes the bind.
		createVolume(ctx, volume(ns, "local", "1Gi", ns))
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(60 * time.Second).Should(And(verdict("Bound"), HaveField("Volume", ns+"-local")))
	})

	It("names the provisioner while it provisions, its failure, and Bound once it creates the PV", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		provisioner := "e2e.example.com/" + ns
		newStorageClass(ctx, ns, provisioner, storagev1.VolumeBindingImmediate, false)
		pvc := createClaim(ctx, claim(ns, "data", "1Gi", ns, ""))
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			verdict("Provisioning"), HaveField("Summary", ContainSubstring(`provisioner "`+provisioner+`"`))))

		// The provisioner reports a failure, as external-provisioner does.
		now := metav1.Now()
		_, err := client.CoreV1().Events(ns).Create(ctx, &v1.Event{
			ObjectMeta:     metav1.ObjectMeta{GenerateName: "data."},
			InvolvedObject: v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: "data", UID: pvc.UID},
			Reason:         "ProvisioningFailed", Type: v1.EventTypeWarning, Message: "rpc error: code = ResourceExhausted desc = e2e quota",
			Source: v1.EventSource{Component: provisioner}, FirstTimestamp: now, LastTimestamp: now, Count: 1,
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			verdict("ProvisioningFailed"), HaveField("Summary", ContainSubstring("e2e quota"))))

		// Then it creates the PV for the claim, with its name and UID, as external-provisioner does.
		pv := volume(ns, "provisioned", "1Gi", ns)
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: "data", UID: pvc.UID}
		pv.Annotations = map[string]string{"pv.kubernetes.io/provisioned-by": provisioner}
		createVolume(ctx, pv)
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			verdict("Bound"), HaveField("Summary", ContainSubstring("provisioned by "+provisioner))))
	})

	It("says Lost when a bound claim's PV is deleted", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "pv", "1Gi", ""))
		createClaim(ctx, claim(ns, "data", "1Gi", "", pv.Name))
		Eventually(ctx, getClaim(ctx, ns, "data")).WithTimeout(wait).Should(claimPhase(v1.ClaimBound))
		Expect(client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})).To(Succeed())
		_, err := client.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		Expect(err == nil || apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			verdict("Lost"), HaveField("Summary", ContainSubstring("was deleted"))))
	})

	It("follows a resize: refused by admission without allowVolumeExpansion, then controller side, node side, done", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		newStorageClass(ctx, ns, noProvisioner, storagev1.VolumeBindingImmediate, true)
		fixed := createVolume(ctx, volume(ns, "fixed", "1Gi", ""))
		createClaim(ctx, claim(ns, "fixed", "1Gi", "", fixed.Name))
		pv := createVolume(ctx, volume(ns, "grows", "1Gi", ns))
		createClaim(ctx, claim(ns, "data", "1Gi", ns, pv.Name))
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(verdict("Bound"), HaveField("OK", true)))

		// No class, no expansion: the apiserver refuses, and pvc-why says so beforehand.
		Eventually(ctx, pvcWhy(ctx, ns, "fixed")).WithTimeout(wait).Should(
			HaveField("Resize.ExpansionRejected", ContainSubstring("refuses a larger request")))
		_, err := client.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, "fixed", types.MergePatchType,
			[]byte(`{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`), metav1.PatchOptions{})
		Expect(err).To(HaveOccurred(), "the apiserver let a claim without an expandable class grow")

		_, err = client.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, "data", types.MergePatchType,
			[]byte(`{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`), metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			verdict("Bound"), HaveField("OK", false), HaveField("Resize.State", "ControllerExpansionPending")))

		// The resizer grows the volume and hands over to the node, as external-resizer does.
		_, err = client.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.MergePatchType,
			[]byte(`{"spec":{"capacity":{"storage":"2Gi"}}}`), metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = client.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, "data", types.MergePatchType,
			[]byte(`{"status":{"allocatedResources":{"storage":"2Gi"},"allocatedResourceStatuses":{"storage":"NodeResizePending"},`+
				`"conditions":[{"type":"FileSystemResizePending","status":"True","message":"Waiting for user to (re-)start a pod to finish file system resize of volume on node."}]}}`),
			metav1.PatchOptions{}, "status")
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(
			HaveField("OK", false), HaveField("Resize.State", "NodeExpansionPending"),
			HaveField("Resize.Summary", ContainSubstring("next mount"))))

		// kubelet finishes.
		_, err = client.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, "data", types.MergePatchType,
			[]byte(`{"status":{"capacity":{"storage":"2Gi"},"allocatedResourceStatuses":null,"conditions":null}}`), metav1.PatchOptions{}, "status")
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, pvcWhy(ctx, ns, "data")).WithTimeout(wait).Should(And(verdict("Bound"), HaveField("OK", true)))
	})

	It("lists only the claims that need attention with --all-namespaces, exit code 1", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "pv", "1Gi", ""))
		createClaim(ctx, claim(ns, "bound", "1Gi", "", pv.Name))
		createClaim(ctx, claim(ns, "waits", "1Gi", "", ns+"-missing"))
		Eventually(ctx, getClaim(ctx, ns, "bound")).WithTimeout(wait).Should(claimPhase(v1.ClaimBound))
		out, err := exec.CommandContext(ctx, os.Getenv("E2E_PVC_WHY"), "-A", "-o", "json").Output()
		var exitErr *exec.ExitError
		Expect(errors.As(err, &exitErr)).To(BeTrue(), "exit code 0 with a Pending claim in the cluster")
		Expect(exitErr.ExitCode()).To(Equal(1))
		var reports []whyReport
		Expect(json.Unmarshal(out, &reports)).To(Succeed())
		var mine []string
		for _, r := range reports {
			if r.Namespace == ns {
				mine = append(mine, r.Name+"="+r.Verdict)
			}
		}
		Expect(mine).To(Equal([]string{"waits=PreboundVolumeMissing"}))
	})

	It("gives the same verdicts offline, from a kubectl get -o yaml dump, as live", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		newStorageClass(ctx, ns, noProvisioner, storagev1.VolumeBindingImmediate, false)
		pv := createVolume(ctx, volume(ns, "pv", "1Gi", ""))
		createClaim(ctx, claim(ns, "bound", "1Gi", "", pv.Name))
		createClaim(ctx, claim(ns, "missing", "1Gi", "", ns+"-missing"))
		small := createVolume(ctx, volume(ns, "small", "1Gi", ns))
		createClaim(ctx, claim(ns, "nomatch", "5Gi", ns, ""))
		Eventually(ctx, pvcWhy(ctx, ns, "bound")).WithTimeout(wait).Should(verdict("Bound"))
		Eventually(ctx, pvcWhy(ctx, ns, "nomatch")).WithTimeout(wait).Should(verdict("NoMatchingVolume"))
		// A new unclaimed volume stays Pending for a grace period (patch 0019): the dump must not
		// catch it Pending and the live query Available.
		Eventually(ctx, getVolume(ctx, small.Name)).WithTimeout(wait).Should(HaveField("Status.Phase", v1.VolumeAvailable))

		dump := filepath.Join(GinkgoT().TempDir(), "dump.yaml")
		Expect(os.WriteFile(dump, kubectlGetDump(ctx, ns), 0o600)).To(Succeed())
		for _, name := range []string{"bound", "missing", "nomatch"} {
			live, err := pvcWhy(ctx, ns, name)()
			Expect(err).NotTo(HaveOccurred())
			out, _ := exec.CommandContext(ctx, os.Getenv("E2E_PVC_WHY"), "--from-file", dump, "-n", ns, name, "-o", "json").Output()
			var offline whyReport
			Expect(json.Unmarshal(out, &offline)).To(Succeed(), "%s", out)
			Expect(offline.Verdict).To(Equal(live.Verdict), name)
			Expect(offline.Volume).To(Equal(live.Volume), name)
			// Other classes' volumes come from specs running beside this one and change between the
			// dump and the live query: compare this namespace's own.
			Expect(ownCandidates(offline, ns)).To(Equal(ownCandidates(live, ns)), name)
			Expect(offline.Binder.Ours).To(Equal(live.Binder.Ours), name)
		}
	})
})

// ownCandidates names the report's candidates that this spec's namespace created.
func ownCandidates(r whyReport, ns string) []string {
	var names []string
	for _, c := range r.Candidates {
		if strings.HasPrefix(c.Name, ns+"-") {
			names = append(names, c.Name+": "+strings.Join(c.Reasons, "; "))
		}
	}
	return names
}

// kubectlGetDump writes what `kubectl get pvc,pv,sc,pods,events,leases -o yaml` prints for a
// namespace (and the cluster-wide objects, and kube-system's Leases): a v1 List.
func kubectlGetDump(ctx context.Context, ns string) []byte {
	var items []runtime.RawExtension
	add := func(list runtime.Object, kind, apiVersion string) {
		data, err := json.Marshal(list)
		Expect(err).NotTo(HaveOccurred())
		var l struct {
			Items []map[string]any `json:"items"`
		}
		Expect(json.Unmarshal(data, &l)).To(Succeed())
		for _, item := range l.Items {
			item["kind"], item["apiVersion"] = kind, apiVersion
			raw, err := json.Marshal(item)
			Expect(err).NotTo(HaveOccurred())
			items = append(items, runtime.RawExtension{Raw: raw})
		}
	}
	pvcs, err := client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	add(pvcs, "PersistentVolumeClaim", "v1")
	pvs, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	add(pvs, "PersistentVolume", "v1")
	classes, err := client.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	add(classes, "StorageClass", "storage.k8s.io/v1")
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	add(pods, "Pod", "v1")
	events, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	add(events, "Event", "v1")
	leases, err := client.CoordinationV1().Leases("kube-system").List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	add(leases, "Lease", "coordination.k8s.io/v1")
	data, err := yaml.Marshal(v1.List{TypeMeta: metav1.TypeMeta{Kind: "List", APIVersion: "v1"}, Items: items})
	Expect(err).NotTo(HaveOccurred())
	return data
}
