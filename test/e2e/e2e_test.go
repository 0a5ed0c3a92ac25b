package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "pv-controller-manager e2e")
}

var client clientset.Interface

var _ = BeforeSuite(func() {
	kubeconfig := os.Getenv("KUBECONFIG")
	Expect(kubeconfig).NotTo(BeEmpty(), "KUBECONFIG must point at the cluster under test")
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	config.QPS, config.Burst = 200, 400
	client, err = clientset.NewForConfig(config)
	Expect(err).NotTo(HaveOccurred())
})

// newNamespace creates a namespace for one spec and deletes it, and the spec's volumes, afterwards.
func newNamespace(ctx context.Context) string {
	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pv-e2e-"}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		_ = client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		_ = client.CoreV1().PersistentVolumes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "e2e-namespace=" + ns.Name})
	})
	return ns.Name
}

func volume(ns, name, size, class string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolume {
	if len(modes) == 0 {
		modes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	}
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name, Labels: map[string]string{"e2e-namespace": ns}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   modes,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              class,
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/" + ns + "-" + name}},
		},
	}
}

func claim(ns, name, size, class, volumeName string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(class),
			VolumeName:       volumeName,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
	}
}

func createVolume(ctx context.Context, pv *v1.PersistentVolume) *v1.PersistentVolume {
	pv, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return pv
}

func createClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim {
	pvc, err := client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Create(ctx, pvc, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return pvc
}

func getClaim(ctx context.Context, ns, name string) func() (*v1.PersistentVolumeClaim, error) {
	return func() (*v1.PersistentVolumeClaim, error) {
		return client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	}
}

func getVolume(ctx context.Context, name string) func() (*v1.PersistentVolume, error) {
	return func() (*v1.PersistentVolume, error) {
		return client.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
	}
}

func claimPhase(phase v1.PersistentVolumeClaimPhase) OmegaMatcher {
	return HaveField("Status.Phase", phase)
}

// eventReasons lists the reasons of the events about the named object.
func eventReasons(ctx context.Context, ns, name string) func() ([]string, error) {
	return func() ([]string, error) {
		events, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return nil, err
		}
		var reasons []string
		for _, e := range events.Items {
			reasons = append(reasons, e.Reason)
		}
		return reasons, nil
	}
}

var _ = Describe("PersistentVolume binding", func() {
	It("binds a pre-bound pair with upstream's annotations and status", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "pv", "1Gi", ""))
		pvc := createClaim(ctx, claim(ns, "data", "1Gi", "", pv.Name))

		Eventually(ctx, getClaim(ctx, ns, "data")).WithTimeout(30 * time.Second).Should(And(
			claimPhase(v1.ClaimBound),
			HaveField("Spec.VolumeName", pv.Name),
			HaveField("ObjectMeta.Annotations", HaveKeyWithValue("pv.kubernetes.io/bind-completed", "yes")),
			HaveField("Status.Capacity", HaveKeyWithValue(v1.ResourceStorage, resource.MustParse("1Gi"))),
			HaveField("Status.AccessModes", ConsistOf(v1.ReadWriteOnce)),
		))
		Eventually(ctx, getVolume(ctx, pv.Name)).Should(And(
			HaveField("Status.Phase", v1.VolumeBound),
			HaveField("Spec.ClaimRef.UID", pvc.UID),
			HaveField("Spec.ClaimRef.Name", "data"),
			HaveField("ObjectMeta.Annotations", HaveKeyWithValue("pv.kubernetes.io/bound-by-controller", "yes")),
		))
	})

	It("binds a claim within seconds after its PV appears", func(ctx SpecContext) {
		if os.Getenv("E2E_LONG_SYNC_PERIOD") == "" {
			Skip("set E2E_LONG_SYNC_PERIOD when the binder runs with a sync period of minutes; otherwise a resync could explain the bind")
		}
		ns := newNamespace(ctx)
		createClaim(ctx, claim(ns, "early", "1Gi", "", ns+"-late"))
		Eventually(ctx, eventReasons(ctx, ns, "early")).WithTimeout(30*time.Second).Should(ContainElement("FailedBinding"),
			"the binder reports once that the requested volume does not exist")
		Consistently(ctx, getClaim(ctx, ns, "early")).WithTimeout(2 * time.Second).Should(claimPhase(v1.ClaimPending))

		createVolume(ctx, volume(ns, "late", "1Gi", ""))
		start := time.Now()
		Eventually(ctx, getClaim(ctx, ns, "early")).WithTimeout(5 * time.Second).WithPolling(50 * time.Millisecond).Should(claimPhase(v1.ClaimBound))
		GinkgoWriter.Printf("claim bound %s after its PV was created\n", time.Since(start))
	})

	It("matches claims without volumeName like upstream: class, access modes, selector, smallest fit", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		class := "e2e-" + ns
		createVolume(ctx, volume(ns, "small", "1Gi", class))
		createVolume(ctx, volume(ns, "fit", "2Gi", class))
		createVolume(ctx, volume(ns, "large", "5Gi", class))
		createVolume(ctx, volume(ns, "other-class", "2Gi", class+"-other"))
		createVolume(ctx, volume(ns, "rox", "2Gi", class, v1.ReadOnlyMany))
		labelled := volume(ns, "labelled", "10Gi", class)
		labelled.Labels["tier"] = "gold"
		createVolume(ctx, labelled)

		createClaim(ctx, claim(ns, "smallest-fit", "1500Mi", class, ""))
		selected := claim(ns, "selected", "1Gi", class, "")
		selected.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
		createClaim(ctx, selected)

		Eventually(ctx, getClaim(ctx, ns, "smallest-fit")).WithTimeout(30 * time.Second).Should(And(claimPhase(v1.ClaimBound), HaveField("Spec.VolumeName", ns+"-fit")))
		Eventually(ctx, getClaim(ctx, ns, "selected")).WithTimeout(30 * time.Second).Should(And(claimPhase(v1.ClaimBound), HaveField("Spec.VolumeName", ns+"-labelled")))
		for _, untouched := range []string{"small", "large", "other-class", "rox"} {
			Expect(getVolume(ctx, ns+"-"+untouched)()).To(HaveField("Spec.ClaimRef", BeNil()), untouched)
		}
	})

	It("keeps a claim pre-bound to a PV that does not fit Pending with VolumeMismatch, and binds it once the PV is fixed", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "too-small", "1Gi", ""))
		createClaim(ctx, claim(ns, "big", "5Gi", "", pv.Name))
		Eventually(ctx, eventReasons(ctx, ns, "big")).WithTimeout(30 * time.Second).Should(ContainElement("VolumeMismatch"))
		Expect(getClaim(ctx, ns, "big")()).To(claimPhase(v1.ClaimPending))

		Eventually(ctx, func() error {
			current, err := getVolume(ctx, pv.Name)()
			if err != nil {
				return err
			}
			current.Spec.Capacity[v1.ResourceStorage] = resource.MustParse("5Gi")
			_, err = client.CoreV1().PersistentVolumes().Update(ctx, current, metav1.UpdateOptions{})
			return err
		}).Should(Succeed())
		Eventually(ctx, getClaim(ctx, ns, "big")).WithTimeout(30 * time.Second).Should(claimPhase(v1.ClaimBound))
	})

	It("keeps a claim naming a PV bound to another claim Pending with FailedBinding", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "taken", "1Gi", ""))
		createClaim(ctx, claim(ns, "first", "1Gi", "", pv.Name))
		Eventually(ctx, getClaim(ctx, ns, "first")).WithTimeout(30 * time.Second).Should(claimPhase(v1.ClaimBound))

		createClaim(ctx, claim(ns, "second", "1Gi", "", pv.Name))
		Eventually(ctx, eventReasons(ctx, ns, "second")).WithTimeout(30 * time.Second).Should(ContainElement("FailedBinding"))
		Consistently(ctx, getClaim(ctx, ns, "second")).WithTimeout(2 * time.Second).Should(claimPhase(v1.ClaimPending))
		Expect(getVolume(ctx, pv.Name)()).To(HaveField("Spec.ClaimRef.Name", "first"))
	})

	It("runs a Pod that uses a pre-bound claim on a node", func(ctx SpecContext) {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		if len(nodes.Items) == 0 {
			Skip("the cluster has no nodes")
		}
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "pod-data", "1Gi", ""))
		createClaim(ctx, claim(ns, "pod-data", "1Gi", "", pv.Name))
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
			Spec: v1.PodSpec{
				Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
					VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
				Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
					PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "pod-data"}}}},
				Tolerations: []v1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}},
			},
		}
		_, err = client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, func() (*v1.Pod, error) { return client.CoreV1().Pods(ns).Get(ctx, "app", metav1.GetOptions{}) }).
			WithTimeout(60 * time.Second).Should(And(HaveField("Spec.NodeName", Not(BeEmpty())), HaveField("Status.Phase", v1.PodRunning)))
	})

	It("releases a Retain PV when its claim is deleted, and marks a claim Lost when its PV is deleted", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		released := createVolume(ctx, volume(ns, "released", "1Gi", ""))
		createClaim(ctx, claim(ns, "goes-away", "1Gi", "", released.Name))
		lost := createVolume(ctx, volume(ns, "lost", "1Gi", ""))
		createClaim(ctx, claim(ns, "stays", "1Gi", "", lost.Name))
		Eventually(ctx, getClaim(ctx, ns, "goes-away")).WithTimeout(30 * time.Second).Should(claimPhase(v1.ClaimBound))
		Eventually(ctx, getClaim(ctx, ns, "stays")).WithTimeout(30 * time.Second).Should(claimPhase(v1.ClaimBound))

		Expect(client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "goes-away", metav1.DeleteOptions{})).To(Succeed())
		Eventually(ctx, getVolume(ctx, released.Name)).WithTimeout(30 * time.Second).Should(HaveField("Status.Phase", v1.VolumeReleased))

		// pv-protection keeps a bound PV until it is unused; drop the finalizer as an admin would.
		Expect(client.CoreV1().PersistentVolumes().Delete(ctx, lost.Name, metav1.DeleteOptions{})).To(Succeed())
		_, err := client.CoreV1().PersistentVolumes().Patch(ctx, lost.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		Expect(err == nil || apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		Eventually(ctx, getClaim(ctx, ns, "stays")).WithTimeout(30 * time.Second).Should(claimPhase(v1.ClaimLost))
	})

	It("serves /metrics with the bind-latency histogram to an authorized token only", func(ctx SpecContext) {
		url := os.Getenv("E2E_METRICS_URL")
		if url == "" {
			Skip("set E2E_METRICS_URL to pv-controller-manager's /metrics")
		}
		ns := newNamespace(ctx)
		// Something to count.
		pv := createVolume(ctx, volume(ns, "counted", "1Gi", ""))
		createClaim(ctx, claim(ns, "counted", "1Gi", "", pv.Name))
		Eventually(ctx, getClaim(ctx, ns, "counted")).WithTimeout(30 * time.Second).Should(claimPhase(v1.ClaimBound))

		token := metricsReaderToken(ctx, ns)
		httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		get := func(bearer string) (int, string) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			Expect(err).NotTo(HaveOccurred())
			if bearer != "" {
				req.Header.Set("Authorization", "Bearer "+bearer)
			}
			resp, err := httpClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		code, _ := get("")
		Expect(code).To(Or(Equal(http.StatusUnauthorized), Equal(http.StatusForbidden)), "anonymous /metrics must be refused")
		Eventually(func() string {
			code, body := get(token)
			if code != http.StatusOK {
				return fmt.Sprintf("status %d", code)
			}
			return body
		}).WithTimeout(30 * time.Second).Should(MatchRegexp(`pv_controller_claim_bind_duration_seconds_count\{path="prebound"\} [1-9]`))
	})

	DescribeTable("fails over to a standby replica: only the leader binds, the Lease moves at once, binding goes on", Serial, Label("local"), func(ctx SpecContext, warm bool) {
		binary, pidfile, kubeconfig := os.Getenv("E2E_PVCM_BINARY"), os.Getenv("E2E_PVCM_PIDFILE"), os.Getenv("E2E_PVCM_KUBECONFIG")
		if binary == "" || pidfile == "" || kubeconfig == "" {
			Skip("set E2E_PVCM_BINARY, E2E_PVCM_PIDFILE (the running leader) and E2E_PVCM_KUBECONFIG to run a second replica")
		}
		leaderPID, err := os.ReadFile(pidfile)
		Expect(err).NotTo(HaveOccurred())
		holder := leaseHolder(ctx)
		before, err := holder()
		Expect(err).NotTo(HaveOccurred())
		Expect(before).NotTo(BeEmpty(), "the running replica holds the Lease")

		standbyLog, err := os.CreateTemp("", "pv-controller-manager-standby-*.log")
		Expect(err).NotTo(HaveOccurred())
		args := []string{"--kubeconfig=" + kubeconfig, "--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig, "--secure-port=10268", "--kube-api-qps=200", "--kube-api-burst=400"}
		if warm {
			args = append(args, "--leader-elect-warm-standby")
		}
		standby := exec.Command(binary, args...)
		standby.Stdout, standby.Stderr = standbyLog, standbyLog
		Expect(standby.Start()).To(Succeed())
		// Afterwards, hand binding back to a replica started as the leader was (same flags and
		// port, which later specs scrape), by a second failover, and hand that one to local-down.
		leaderCmdline, err := os.ReadFile("/proc/" + strings.TrimSpace(string(leaderPID)) + "/cmdline")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			argv := strings.Split(strings.TrimRight(string(leaderCmdline), "\x00"), "\x00")
			logFile, err := os.OpenFile(filepath.Join(filepath.Dir(pidfile), "pv-controller-manager.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			Expect(err).NotTo(HaveOccurred())
			replacement := exec.Command(argv[0], argv[1:]...)
			replacement.Stdout, replacement.Stderr = logFile, logFile
			Expect(replacement.Start()).To(Succeed())
			Expect(os.WriteFile(pidfile, []byte(fmt.Sprint(replacement.Process.Pid)), 0o644)).To(Succeed())
			holder := leaseHolder(ctx) // the spec's ctx is done by now
			standbyHolder, err := holder()
			Expect(err).NotTo(HaveOccurred())
			Expect(standby.Process.Signal(syscall.SIGTERM)).To(Succeed())
			_, _ = standby.Process.Wait()
			Eventually(ctx, holder).WithTimeout(10*time.Second).Should(And(Not(Equal(standbyHolder)), Not(BeEmpty())),
				"the replacement takes the Lease back")
		})
		Consistently(ctx, holder).WithTimeout(3*time.Second).Should(Equal(before), "the standby must not take the Lease from a live leader")
		standbyLogText := func() (string, error) {
			data, err := os.ReadFile(standbyLog.Name())
			return strings.ToLower(string(data)), err // client-go's messages changed case over releases
		}
		const warmSynced, acquired = "warm standby: the binder's caches have synced", "successfully acquired lease"
		if warm {
			Eventually(ctx, standbyLogText).WithTimeout(30*time.Second).Should(ContainSubstring(warmSynced),
				"a warm standby syncs the binder's caches while another replica holds the Lease")
		}

		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "before", "1Gi", ""))
		createClaim(ctx, claim(ns, "before", "1Gi", "", pv.Name))
		Eventually(ctx, getClaim(ctx, ns, "before")).WithTimeout(30 * time.Second).Should(claimPhase(v1.ClaimBound))

		pid := strings.TrimSpace(string(leaderPID))
		Expect(exec.Command("kill", "-TERM", pid).Run()).To(Succeed())
		stopped := time.Now()
		Eventually(ctx, holder).WithTimeout(5*time.Second).WithPolling(20*time.Millisecond).
			Should(And(Not(Equal(before)), Not(BeEmpty())), "the standby takes the released Lease")
		GinkgoWriter.Printf("Lease moved %s after SIGTERM to the leader\n", time.Since(stopped))

		for i := range 20 {
			name := fmt.Sprintf("after-%02d", i)
			pv := createVolume(ctx, volume(ns, name, "1Gi", ""))
			createClaim(ctx, claim(ns, name, "1Gi", "", pv.Name))
		}
		for i := range 20 {
			name := fmt.Sprintf("after-%02d", i)
			Eventually(ctx, getClaim(ctx, ns, name)).WithTimeout(30 * time.Second).Should(claimPhase(v1.ClaimBound))
			Expect(getVolume(ctx, ns+"-"+name)()).To(HaveField("Spec.ClaimRef.Name", name), "each PV holds exactly its own claim")
		}
		// client-go logs the acquisition after the Lease update the spec saw: wait for the line.
		Eventually(ctx, standbyLogText).WithTimeout(10 * time.Second).Should(ContainSubstring(acquired))
		text, err := standbyLogText()
		Expect(err).NotTo(HaveOccurred())
		if warm {
			Expect(strings.Index(text, warmSynced)).To(BeNumerically("<", strings.Index(text, acquired)), "synced before it held the Lease")
		} else {
			Expect(text).NotTo(ContainSubstring(warmSynced), "a cold standby starts its informers only when it leads")
		}
	},
		Entry("cold standby (the default, as KCM)", false),
		Entry("warm standby (--leader-elect-warm-standby)", true),
	)

	It("binds 1000 pre-bound pairs, each PV to exactly its own claim", Label("slow"), func(ctx SpecContext) {
		load := os.Getenv("E2E_PV_LOAD")
		if load == "" {
			Skip("set E2E_PV_LOAD to bin/pv-load")
		}
		ns := newNamespace(ctx)
		cmd := exec.CommandContext(ctx, load, "--kubeconfig", os.Getenv("KUBECONFIG"), "--namespace", ns, "--prefix", ns,
			"--count", "1000", "--concurrency", "50", "--quiet", "--timeout", "10m")
		cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
		Expect(cmd.Run()).To(Succeed(), "pv-load verifies that every volume is bound to exactly its own claim")
	}, SpecTimeout(15*time.Minute))
})

// metricsReaderToken returns a token of a new service account allowed to GET /metrics.
var _ = Describe("Upstream binder guard", Serial, func() {
	// A kube-controller-manager pod (as kubeadm's mirror pod looks) that still runs its binder: we
	// must hold our writes, say so with a Warning event and a metric, and bind once it is gone.
	It("holds binding while a kube-controller-manager pod runs its binder, and binds once it is gone", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		// The guard counts only the KCM that holds KCM's Lease when that one is a pod here (on
		// kind it is): so this pod goes on the leader's node. Elsewhere (KCM not a pod, as on the
		// local cluster) it counts anyway. It never runs: its image does not exist.
		node := "e2e-no-such-node"
		if holder := kcmLeaseHolder(ctx); holder != "" {
			node = holderNode(holder)
		}
		kcm := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				GenerateName: "kube-controller-manager-e2e-",
				Namespace:    "kube-system",
				Labels:       map[string]string{"component": "kube-controller-manager", "tier": "control-plane"},
			},
			Spec: v1.PodSpec{
				NodeName: node,
				Containers: []v1.Container{{
					Name:    "kube-controller-manager",
					Image:   "e2e.invalid/kube-controller-manager:never",
					Command: []string{"kube-controller-manager", "--controllers=*,bootstrapsigner,tokencleaner", "--leader-elect=true"},
				}},
			},
		}
		kcm, err := client.CoreV1().Pods("kube-system").Create(ctx, kcm, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		deleted := false
		DeferCleanup(func(ctx SpecContext) {
			if !deleted {
				_ = client.CoreV1().Pods("kube-system").Delete(ctx, kcm.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			}
		})

		Eventually(ctx, eventReasons(ctx, "kube-system", kcm.Name)).WithTimeout(30*time.Second).Should(ContainElement("UpstreamBinderActive"),
			"a Warning event on the KCM pod")
		url := os.Getenv("E2E_METRICS_URL")
		var token string
		if url != "" {
			token = metricsReaderToken(ctx, ns)
			Eventually(ctx, func() string { return scrapeMetrics(ctx, url, token) }).WithTimeout(30 * time.Second).
				Should(MatchRegexp(`(?m)^pv_controller_upstream_binder_active 1$`))
		}

		pv := createVolume(ctx, volume(ns, "held", "1Gi", ""))
		createClaim(ctx, claim(ns, "held", "1Gi", "", pv.Name))
		// Bound within ~1 s otherwise (the other specs); held, it must stay unbound.
		Consistently(ctx, getClaim(ctx, ns, "held")).WithTimeout(5 * time.Second).WithPolling(250 * time.Millisecond).
			ShouldNot(claimPhase(v1.ClaimBound))
		Expect(getVolume(ctx, pv.Name)()).To(HaveField("Spec.ClaimRef", BeNil()), "no write may reach the PV while held")

		Expect(client.CoreV1().Pods("kube-system").Delete(ctx, kcm.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})).To(Succeed())
		deleted = true
		Eventually(ctx, getClaim(ctx, ns, "held")).WithTimeout(30 * time.Second).Should(claimPhase(v1.ClaimBound))
		if url != "" {
			Eventually(ctx, func() string { return scrapeMetrics(ctx, url, token) }).WithTimeout(30 * time.Second).
				Should(MatchRegexp(`(?m)^pv_controller_upstream_binder_active 0$`))
		}
	})
})

// leaseHolder reads the holder of our Lease (empty while nobody holds it).
func leaseHolder(ctx context.Context) func() (string, error) {
	return func() (string, error) {
		lease, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "pv-controller-manager", metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil {
			return "", err
		}
		return *lease.Spec.HolderIdentity, nil
	}
}

// scrapeMetrics returns the /metrics body read with token, or a line saying what went wrong.
func scrapeMetrics(ctx context.Context, url, token string) string {
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := httpClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("status %d", resp.StatusCode)
	}
	return string(body)
}

func metricsReaderToken(ctx context.Context, ns string) string {
	sa, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	name := ns + "-metrics-reader"
	_, err = client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		_ = client.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = client.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return strings.TrimSpace(tr.Status.Token)
}
