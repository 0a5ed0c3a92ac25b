package e2e

// The static-pod rollout on a real kubelet (make e2e-node, hack/e2e/e2e-node.sh). Skipped unless
// E2E_NODE=1: it edits the kubelet's static pod directory.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	v1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

var _ = Describe("Static-pod rollout on a real node", Ordered, Serial, Label("node"), func() {
	var (
		nodeName, manifestsDir, backupDir, rolloutScript, ourManifest, kcmOriginal, rbacDir, ourImage, metricsURL string
		ns, token, hostname                                                                                       string
		pairs                                                                                                     int
	)
	kcmPod := func() string { return "kube-controller-manager-" + nodeName }
	ourPod := func() string { return "pv-controller-manager-" + nodeName }

	BeforeAll(func(ctx SpecContext) {
		if os.Getenv("E2E_NODE") != "1" {
			Skip("make e2e-node runs these (a real kubelet, containerd, static pods)")
		}
		nodeName, manifestsDir, backupDir = os.Getenv("E2E_NODE_NAME"), os.Getenv("E2E_NODE_MANIFESTS_DIR"), os.Getenv("E2E_NODE_BACKUP_DIR")
		rolloutScript, ourManifest, kcmOriginal = os.Getenv("E2E_NODE_ROLLOUT"), os.Getenv("E2E_NODE_OUR_MANIFEST"), os.Getenv("E2E_NODE_KCM_ORIGINAL")
		rbacDir, ourImage, metricsURL = os.Getenv("E2E_NODE_RBAC_DIR"), os.Getenv("E2E_NODE_OUR_IMAGE"), os.Getenv("E2E_METRICS_URL")
		ns = newNamespace(ctx)
		token = metricsReaderToken(ctx, ns)
		// Leader identities are "<hostname>_<uuid>"; the static pods share this machine's hostname.
		var err error
		hostname, err = os.Hostname()
		Expect(err).NotTo(HaveOccurred())
	})

	// bindPair creates a pre-bound pair and waits for it to be Bound.
	bindPair := func(ctx context.Context, timeout time.Duration) {
		pairs++
		name := fmt.Sprintf("node-%02d", pairs)
		pv := createVolume(ctx, volume(ns, name, "1Gi", ""))
		createClaim(ctx, claim(ns, name, "1Gi", "", pv.Name))
		Eventually(ctx, getClaim(ctx, ns, name)).WithTimeout(timeout).Should(claimPhase(v1.ClaimBound))
		Expect(getVolume(ctx, pv.Name)()).To(HaveField("Spec.ClaimRef.Name", name))
	}
	rollout := func(action string) {
		// pv-rollout watches the mirror pods: ours up before KCM's binder goes off (enable), KCM's
		// binder back before ours goes (disable).
		args := []string{action, "--manifests-dir=" + manifestsDir, "--backup-dir=" + backupDir, "--kubeconfig=" + os.Getenv("KUBECONFIG"), "--node-name=" + nodeName}
		if action == "enable" {
			args = append(args, "--manifest="+ourManifest, "--image="+ourImage)
		}
		out, err := exec.Command(rolloutScript, args...).CombinedOutput()
		GinkgoWriter.Printf("rollout %s:\n%s", action, out)
		Expect(err).NotTo(HaveOccurred(), string(out))
	}
	// kcmCommand returns the command of KCM's current mirror pod once it is Running.
	kcmCommand := func(ctx context.Context) func() (string, error) {
		return func() (string, error) {
			pod, err := client.CoreV1().Pods("kube-system").Get(ctx, kcmPod(), metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			if pod.Status.Phase != v1.PodRunning || !podReady(pod) {
				return "", fmt.Errorf("%s is %s, not ready", pod.Name, pod.Status.Phase)
			}
			return strings.Join(pod.Spec.Containers[0].Command, " "), nil
		}
	}
	ourPodReady := func(ctx context.Context) func() (*v1.Pod, error) {
		return func() (*v1.Pod, error) {
			pod, err := client.CoreV1().Pods("kube-system").Get(ctx, ourPod(), metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			if !podReady(pod) {
				return nil, fmt.Errorf("%s not ready (%s)", pod.Name, pod.Status.Phase)
			}
			return pod, nil
		}
	}
	metric := func(ctx context.Context, pattern string) func() (float64, error) {
		re := regexp.MustCompile(`(?m)^` + pattern + ` (\S+)$`)
		return func() (float64, error) {
			body := scrapeMetrics(ctx, metricsURL, token)
			m := re.FindStringSubmatch(body)
			if m == nil {
				return -1, fmt.Errorf("%s not in /metrics: %.200s", pattern, body)
			}
			return strconv.ParseFloat(m[1], 64)
		}
	}
	preboundBinds := regexp.QuoteMeta(`pv_controller_claim_bind_duration_seconds_count{path="prebound"}`)

	It("1. upstream KCM, a static pod from kubeadm's manifest, binds a pre-bound pair", func(ctx SpecContext) {
		Eventually(ctx, kcmCommand(ctx)).WithTimeout(3 * time.Minute).WithPolling(time.Second).
			ShouldNot(ContainSubstring("-persistentvolume-binder-controller"))
		bindPair(ctx, 2*time.Minute)
	})

	It("2. rollout enable: KCM restarts without its binder, ours runs, holds the Lease and binds", func(ctx SpecContext) {
		applyManifests(ctx, rbacDir)
		rollout("enable")
		Eventually(ctx, kcmCommand(ctx)).WithTimeout(2 * time.Minute).WithPolling(time.Second).
			Should(ContainSubstring("--controllers=*,bootstrapsigner,tokencleaner,-persistentvolume-binder-controller"))
		pod, err := getWithin(ctx, ourPodReady(ctx), 2*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(pod.Spec.Containers[0].Image).To(Equal(ourImage))
		Expect(pod.Annotations).To(HaveKey("kubernetes.io/config.mirror"))
		Eventually(ctx, leaseHolder(ctx)).WithTimeout(time.Minute).Should(HavePrefix(hostname + "_"))
		bindPair(ctx, time.Minute)
		Eventually(ctx, metric(ctx, preboundBinds)).WithTimeout(30*time.Second).Should(BeNumerically(">=", 1),
			"our metrics count the binds")
		Eventually(ctx, metric(ctx, "pv_controller_upstream_binder_active")).Should(BeNumerically("==", 0))
	})

	It("3. liveness: our container killed, the kubelet restarts it, it re-acquires the Lease and binds", func(ctx SpecContext) {
		var before string
		Eventually(ctx, func() (string, error) {
			var err error
			before, err = leaseHolder(ctx)()
			return before, err
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(HavePrefix(hostname+"_"), "we hold the Lease before the kill")
		pid := ourProcess()
		Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
		Eventually(ctx, func() (int32, error) {
			pod, err := ourPodReady(ctx)()
			if err != nil {
				return 0, err
			}
			return pod.Status.ContainerStatuses[0].RestartCount, nil
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(BeNumerically(">=", 1))
		// SIGKILL released nothing: the new process takes the Lease once it expires.
		Eventually(ctx, leaseHolder(ctx)).WithTimeout(time.Minute).Should(And(HavePrefix(hostname+"_"), Not(Equal(before))))
		bindPair(ctx, time.Minute)
	})

	It("3b. the guard: KCM's manifest edited back by hand, we hold our writes, warn, and KCM binds", func(ctx SpecContext) {
		original, err := os.ReadFile(kcmOriginal)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(manifestsDir, "kube-controller-manager.yaml"), original, 0o600)).To(Succeed())
		Eventually(ctx, kcmCommand(ctx)).WithTimeout(2 * time.Minute).WithPolling(time.Second).
			ShouldNot(ContainSubstring("-persistentvolume-binder-controller"))
		Eventually(ctx, eventReasons(ctx, "kube-system", kcmPod())).WithTimeout(time.Minute).Should(ContainElement("UpstreamBinderActive"))
		Eventually(ctx, metric(ctx, "pv_controller_upstream_binder_active")).WithTimeout(30 * time.Second).Should(BeNumerically("==", 1))
		oursBefore, err := metric(ctx, preboundBinds)()
		Expect(err).NotTo(HaveOccurred())
		bindPair(ctx, 2*time.Minute) // by KCM: ours holds its writes
		Expect(metric(ctx, preboundBinds)()).To(Equal(oursBefore), "we bound while KCM's binder ran")

		rollout("enable") // back to ours; the hand-restored manifest is the new backup (same bytes)
		Eventually(ctx, kcmCommand(ctx)).WithTimeout(2 * time.Minute).WithPolling(time.Second).
			Should(ContainSubstring("-persistentvolume-binder-controller"))
		Eventually(ctx, metric(ctx, "pv_controller_upstream_binder_active")).WithTimeout(time.Minute).Should(BeNumerically("==", 0))
		bindPair(ctx, time.Minute)
		Eventually(ctx, metric(ctx, preboundBinds)).WithTimeout(30 * time.Second).Should(BeNumerically(">", oursBefore))
	})

	It("4. rollout disable: KCM's manifest restored byte for byte, our pod gone, upstream binds", func(ctx SpecContext) {
		rollout("disable")
		original, err := os.ReadFile(kcmOriginal)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.ReadFile(filepath.Join(manifestsDir, "kube-controller-manager.yaml"))).To(Equal(original))
		Eventually(ctx, func() error {
			_, err := client.CoreV1().Pods("kube-system").Get(ctx, ourPod(), metav1.GetOptions{})
			return err
		}).WithTimeout(2*time.Minute).Should(Satisfy(apierrors.IsNotFound), "our mirror pod is removed")
		Eventually(ctx, kcmCommand(ctx)).WithTimeout(2 * time.Minute).WithPolling(time.Second).
			ShouldNot(ContainSubstring("-persistentvolume-binder-controller"))
		bindPair(ctx, 2*time.Minute)
	})
})

func podReady(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func getWithin[T any](ctx context.Context, get func() (T, error), timeout time.Duration) (T, error) {
	var last T
	var lastErr error
	Eventually(ctx, func() error {
		last, lastErr = get()
		return lastErr
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	return last, lastErr
}

// ourProcess finds the container's process (host PID namespace): the image's binary path.
func ourProcess() int {
	out, err := exec.Command("pgrep", "-f", "^/usr/local/bin/pv-controller-manager ").Output()
	Expect(err).NotTo(HaveOccurred(), "our container's process")
	fields := strings.Fields(string(out))
	Expect(fields).To(HaveLen(1), "exactly one pv-controller-manager container process")
	pid, err := strconv.Atoi(fields[0])
	Expect(err).NotTo(HaveOccurred())
	return pid
}

// applyManifests creates every object of the YAML files in dir (kubectl apply, minus kubectl).
func applyManifests(ctx context.Context, dir string) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty())
	decoder := scheme.Codecs.UniversalDeserializer()
	for _, f := range files {
		data, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			Expect(err).NotTo(HaveOccurred())
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			obj, _, err := decoder.Decode(doc, nil, nil)
			Expect(err).NotTo(HaveOccurred(), f)
			Expect(create(ctx, obj)).To(Or(Succeed(), Satisfy(apierrors.IsAlreadyExists)), f)
		}
	}
}

func create(ctx context.Context, obj runtime.Object) error {
	var err error
	switch o := obj.(type) {
	case *rbacv1.ClusterRole:
		_, err = client.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRoleBinding:
		_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.Role:
		_, err = client.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.RoleBinding:
		_, err = client.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *flowcontrolv1.FlowSchema:
		_, err = client.FlowcontrolV1().FlowSchemas().Create(ctx, o, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("applyManifests: unsupported kind %T", obj)
	}
	return err
}
