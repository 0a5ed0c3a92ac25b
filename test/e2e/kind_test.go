package e2e

// make e2e-kind (hack/e2e/e2e-kind.sh): a kind cluster of three control-plane nodes and a worker.
// Skipped unless E2E_KIND=1. The script runs three ginkgo passes: label kind-rollout (KCM binds,
// then our static pod node by node), then the suite with the kind specs, then kind-disable.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// kindEnv is what hack/e2e/e2e-kind.sh passes.
type kindEnv struct {
	engine, image, imageDigest, testImage, originals string
	controlPlanes                                    []string
	worker                                           string
}

func kindSetup() kindEnv {
	if os.Getenv("E2E_KIND") != "1" {
		Skip("make e2e-kind runs these (a kind cluster, node containers)")
	}
	e := kindEnv{
		engine: os.Getenv("E2E_KIND_ENGINE"), image: os.Getenv("E2E_KIND_IMAGE"), imageDigest: os.Getenv("E2E_KIND_IMAGE_DIGEST"), testImage: os.Getenv("E2E_KIND_TEST_IMAGE"),
		originals: os.Getenv("E2E_KIND_ORIGINALS"), controlPlanes: strings.Split(os.Getenv("E2E_KIND_CONTROL_PLANES"), ","),
		worker: os.Getenv("E2E_KIND_WORKER"),
	}
	Expect(e.engine).NotTo(BeEmpty())
	Expect(e.controlPlanes).To(HaveLen(3))
	controlPlaneReadyOnce.Do(func() { waitControlPlaneReady(e) })
	return e
}

var controlPlaneReadyOnce sync.Once

// waitControlPlaneReady waits until what every spec assumes has converged: each control-plane
// node's apiserver, KCM and scheduler mirror pods Running and Ready, and every node (the worker's
// kubelet included) Ready. kind's --wait covers the nodes, not every static pod: a spec that read
// KCM's pod 0.13 s after the cluster came up once found the third node's still Pending.
func waitControlPlaneReady(e kindEnv) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	Eventually(ctx, func() error {
		for _, node := range e.controlPlanes {
			for _, component := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
				if _, err := staticPod(ctx, component, node, true)(); err != nil {
					return err
				}
			}
		}
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(nodes.Items) != len(e.controlPlanes)+1 {
			return fmt.Errorf("%d nodes, want %d", len(nodes.Items), len(e.controlPlanes)+1)
		}
		for _, n := range nodes.Items {
			if !nodeReady(&n) {
				return fmt.Errorf("node %s not Ready", n.Name)
			}
		}
		return nil
	}).WithTimeout(5*time.Minute).WithPolling(time.Second).Should(Succeed(), "control plane and nodes Ready")
	took := time.Since(start).Round(10 * time.Millisecond)
	GinkgoWriter.Printf("control plane Ready on %v, worker %s Ready: waited %s\n", e.controlPlanes, e.worker, took)
	fmt.Fprintf(os.Stderr, "e2e-kind: control plane and nodes Ready after %s of waiting\n", took)
}

func nodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// readOriginal is KCM's manifest of node as it was before the rollout.
func readOriginal(e kindEnv, node string) []byte {
	data, err := os.ReadFile(filepath.Join(e.originals, node+".yaml"))
	Expect(err).NotTo(HaveOccurred())
	return data
}

// onNode runs a command in a node container.
func (e kindEnv) onNode(ctx context.Context, node string, args ...string) string {
	out, err := exec.CommandContext(ctx, e.engine, append([]string{"exec", node}, args...)...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s: %s", strings.Join(args, " "), out)
	return string(out)
}

// rolloutStatus runs `pv-rollout status` on node and returns its output and exit code.
func (e kindEnv) rolloutStatus(ctx context.Context, node string, args ...string) (string, int) {
	cmd := exec.CommandContext(ctx, e.engine, append([]string{"exec", node, "/usr/local/bin/pv-rollout", "status"}, args...)...)
	out, err := cmd.CombinedOutput()
	GinkgoWriter.Printf("%s: pv-rollout status %s:\n%s", node, strings.Join(args, " "), out)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	Expect(err).NotTo(HaveOccurred())
	return string(out), 0
}

// expectActiveBinder checks what `pv-rollout status` says on node, within a minute (a Lease or a
// Ready condition may still be moving): its last line and exit code.
func (e kindEnv) expectActiveBinder(ctx context.Context, node, binder string, args ...string) string {
	var out string
	Eventually(ctx, func() error {
		var code int
		out, code = e.rolloutStatus(ctx, node, args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		wantCode := 0
		if binder == "none" {
			wantCode = 1
		}
		if last := lines[len(lines)-1]; last != "active binder: "+binder || code != wantCode {
			return fmt.Errorf("pv-rollout status exited %d with %q, want %d and %q", code, last, wantCode, "active binder: "+binder)
		}
		return nil
	}).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	return out
}

// expectKCMStillBinds checks what a failed enable leaves on node: KCM's manifest as it was before
// the rollout, no manifest of ours, a pair created now bound by KCM, and status saying so.
func (e kindEnv) expectKCMStillBinds(ctx context.Context, node, ns, name string) {
	Expect(e.onNode(ctx, node, "cat", "/etc/kubernetes/manifests/kube-controller-manager.yaml")).
		To(Equal(string(readOriginal(e, node))), "KCM's manifest must be untouched")
	Expect(e.onNode(ctx, node, "ls", "/etc/kubernetes/manifests")).NotTo(ContainSubstring("pv-controller-manager.yaml"))
	pv := createVolume(ctx, volume(ns, name, "1Gi", ""))
	createClaim(ctx, claim(ns, name, "1Gi", "", pv.Name))
	Eventually(ctx, getClaim(ctx, ns, name)).WithTimeout(2 * time.Minute).Should(claimPhase(v1.ClaimBound))
	e.expectActiveBinder(ctx, node, "kube-controller-manager")
}

func (e kindEnv) engineRun(ctx context.Context, args ...string) {
	out, err := exec.CommandContext(ctx, e.engine, args...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s %s: %s", e.engine, strings.Join(args, " "), out)
}

func kcmLeaseHolder(ctx context.Context) string {
	lease, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// holderNode is a leader identity's host (identities are <hostname>_<uuid>).
func holderNode(holder string) string {
	node, _, _ := strings.Cut(holder, "_")
	return node
}

// staticPod returns a node's mirror pod of component once it is Running; ready additionally
// requires its Ready condition.
func staticPod(ctx context.Context, component, node string, ready bool) func() (*v1.Pod, error) {
	return func() (*v1.Pod, error) {
		pod, err := client.CoreV1().Pods("kube-system").Get(ctx, component+"-"+node, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if pod.Status.Phase != v1.PodRunning || (ready && !podReady(pod)) {
			return nil, fmt.Errorf("%s is %s (ready %v)", pod.Name, pod.Status.Phase, podReady(pod))
		}
		return pod, nil
	}
}

// kcmCommandOn returns the command of a node's KCM mirror pod once it is Running and Ready.
func kcmCommandOn(ctx context.Context, node string) func() (string, error) {
	return func() (string, error) {
		pod, err := staticPod(ctx, "kube-controller-manager", node, true)()
		if err != nil {
			return "", err
		}
		return strings.Join(pod.Spec.Containers[0].Command, " "), nil
	}
}

// pairFeeder creates pre-bound pairs in ns on a ticker and records when each is first seen Bound.
type pairFeeder struct {
	ns      string
	mu      sync.Mutex
	created map[string]time.Time
	bound   map[string]time.Time
	errs    []error
	stop    chan struct{}
	done    sync.WaitGroup
}

func startPairFeeder(ctx context.Context, ns string, every time.Duration) *pairFeeder {
	f := &pairFeeder{ns: ns, created: map[string]time.Time{}, bound: map[string]time.Time{}, stop: make(chan struct{})}
	f.done.Add(2)
	go func() {
		defer GinkgoRecover()
		defer f.done.Done()
		for i := 1; ; i++ {
			select {
			case <-f.stop:
				return
			case <-time.After(every):
			}
			name := fmt.Sprintf("pair-%03d", i)
			at := time.Now()
			pv, err := client.CoreV1().PersistentVolumes().Create(ctx, volume(ns, name, "1Gi", ""), metav1.CreateOptions{})
			if err == nil {
				_, err = client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim(ns, name, "1Gi", "", pv.Name), metav1.CreateOptions{})
			}
			f.mu.Lock()
			if err != nil {
				// The apiserver behind the load balancer may be the one just lost; retry with a new name.
				f.errs = append(f.errs, err)
			} else {
				f.created[name] = at
			}
			f.mu.Unlock()
		}
	}()
	go func() {
		defer GinkgoRecover()
		defer f.done.Done()
		for {
			select {
			case <-f.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			f.poll(ctx)
		}
	}()
	return f
}

func (f *pairFeeder) poll(ctx context.Context) {
	list, err := client.CoreV1().PersistentVolumeClaims(f.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range list.Items {
		if _, seen := f.bound[c.Name]; !seen && c.Status.Phase == v1.ClaimBound {
			f.bound[c.Name] = now
		}
	}
}

// Stop stops creating pairs; it may be called more than once.
func (f *pairFeeder) Stop() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	f.done.Wait()
}

func (f *pairFeeder) createdSince(t time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, at := range f.created {
		if !at.Before(t) {
			n++
		}
	}
	return n
}

// waitAllBound waits until every pair created so far is Bound and returns the slowest bind.
func (f *pairFeeder) waitAllBound(ctx context.Context, timeout time.Duration) (int, time.Duration) {
	var n int
	var slowest time.Duration
	Eventually(ctx, func() error {
		f.poll(ctx)
		f.mu.Lock()
		defer f.mu.Unlock()
		n, slowest = len(f.created), 0
		var pending []string
		for name, at := range f.created {
			b, ok := f.bound[name]
			if !ok {
				pending = append(pending, name)
				continue
			}
			slowest = max(slowest, b.Sub(at))
		}
		if len(pending) > 0 {
			slices.Sort(pending)
			return fmt.Errorf("%d of %d pairs not Bound yet: %v", len(pending), n, pending)
		}
		return nil
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	return n, slowest
}

// slowestSince returns the slowest bind (first seen Bound minus creation) of pairs created after t, slowest first.
func (f *pairFeeder) slowestSince(t time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var slowest time.Duration
	for name, at := range f.created {
		if b, ok := f.bound[name]; ok && !at.Before(t) {
			slowest = max(slowest, b.Sub(at))
		}
	}
	return slowest
}

// expectOneToOne checks every volume of ns against its claim, both ways: each PV bound to exactly
// its own claim (name and UID), each claim to exactly its own PV.
func expectOneToOne(ctx context.Context, ns string) int {
	claims, err := client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	volumes, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: "e2e-namespace=" + ns})
	Expect(err).NotTo(HaveOccurred())
	byName := map[string]v1.PersistentVolume{}
	for _, pv := range volumes.Items {
		byName[pv.Name] = pv
	}
	for _, c := range claims.Items {
		Expect(c.Spec.VolumeName).To(Equal(ns+"-"+c.Name), "claim %s", c.Name)
		pv, ok := byName[c.Spec.VolumeName]
		Expect(ok).To(BeTrue(), "claim %s: volume %s", c.Name, c.Spec.VolumeName)
		Expect(pv.Spec.ClaimRef).NotTo(BeNil(), "volume %s", pv.Name)
		Expect(pv.Spec.ClaimRef.Name).To(Equal(c.Name), "volume %s", pv.Name)
		Expect(pv.Spec.ClaimRef.UID).To(Equal(c.UID), "volume %s", pv.Name)
		Expect(pv.Status.Phase).To(Equal(v1.VolumeBound), "volume %s", pv.Name)
	}
	return len(claims.Items)
}

var _ = Describe("kind: rollout node by node", Ordered, Serial, Label("kind", "kind-rollout"), func() {
	var e kindEnv
	BeforeAll(func() { e = kindSetup() })

	It("binds through kube-controller-manager before the rollout", func(ctx SpecContext) {
		for _, node := range e.controlPlanes {
			var pod *v1.Pod
			Eventually(ctx, func() (err error) {
				pod, err = staticPod(ctx, "kube-controller-manager", node, true)()
				return err
			}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
			Expect(strings.Join(pod.Spec.Containers[0].Command, " ")).NotTo(ContainSubstring("-persistentvolume-binder-controller"))
			// What disable must restore, byte for byte.
			Expect(os.WriteFile(filepath.Join(e.originals, node+".yaml"),
				[]byte(e.onNode(ctx, node, "cat", "/etc/kubernetes/manifests/kube-controller-manager.yaml")), 0o644)).To(Succeed())
		}
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "kcm", "1Gi", ""))
		createClaim(ctx, claim(ns, "kcm", "1Gi", "", pv.Name))
		Eventually(ctx, getClaim(ctx, ns, "kcm")).WithTimeout(2 * time.Minute).Should(claimPhase(v1.ClaimBound))
		e.expectActiveBinder(ctx, e.controlPlanes[0], "kube-controller-manager")
	})

	// The identity's kubeconfig cannot authenticate: our pod starts but never lists anything, so
	// it is never ready to bind, and enable must not turn KCM's binder off.
	It("leaves KCM's binder on when our identity cannot authenticate", func(ctx SpecContext) {
		node := e.controlPlanes[0]
		const conf = "/etc/kubernetes/pv-controller-manager.conf"
		good := e.onNode(ctx, node, "cat", conf)
		DeferCleanup(func(ctx SpecContext) { e.writeOnNode(ctx, node, conf, []byte(good)) })
		bad, err := clientcmd.Load([]byte(good))
		Expect(err).NotTo(HaveOccurred())
		for _, user := range bad.AuthInfos {
			user.ClientCertificateData, user.ClientKeyData, user.Token = nil, nil, "not-a-token-of-this-cluster"
		}
		data, err := clientcmd.Write(*bad)
		Expect(err).NotTo(HaveOccurred())
		e.writeOnNode(ctx, node, conf, data)

		ns := newNamespace(ctx)
		out, err := exec.CommandContext(ctx, e.engine, "exec", node, "/usr/local/bin/pv-rollout", "enable", "--image", e.image, "--wait-timeout", "2m").CombinedOutput()
		GinkgoWriter.Printf("%s: pv-rollout enable with an identity that cannot authenticate: %s", node, out)
		Expect(err).To(HaveOccurred(), "enable must fail when ours cannot reach the apiserver")
		Expect(string(out)).To(ContainSubstring("KCM's binder left on"))
		Expect(string(out)).To(MatchRegexp(`Unauthorized|api-access|binder-caches`), "the error names why")
		e.expectKCMStillBinds(ctx, node, ns, "kcm-bad-identity")
	})

	It("leaves KCM's binder on when our image cannot be pulled; claims created meanwhile bind through KCM", func(ctx SpecContext) {
		node := e.controlPlanes[0]
		ns := newNamespace(ctx)
		args := []string{"exec", node, "/usr/local/bin/pv-rollout", "enable", "--image", "pv-controller-manager.local/pv-controller-manager:no-such-tag", "--wait-timeout", "3m"}
		out, err := exec.CommandContext(ctx, e.engine, args...).CombinedOutput()
		GinkgoWriter.Printf("%s: pv-rollout enable with an unpullable image: %s", node, out)
		Expect(err).To(HaveOccurred(), "enable must fail when our pod cannot start")
		Expect(string(out)).To(MatchRegexp(`ImagePullBackOff|ErrImagePull|not up after`))
		Expect(string(out)).To(ContainSubstring("KCM's binder left on"))
		e.expectKCMStillBinds(ctx, node, ns, "kcm-meanwhile")
	})

	It("rolls out one control-plane node at a time; pairs created throughout all bind, each PV to its own claim", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		feeder := startPairFeeder(ctx, ns, 500*time.Millisecond)
		defer feeder.Stop()
		for i, node := range e.controlPlanes {
			stepStart := time.Now()
			before := kcmLeaseHolder(ctx)
			// The first node by digest (as docs/install.md recommends), the others by tag: both
			// references resolve to the image make e2e-kind pushed to its registry.
			image := e.image
			if i == 0 && e.imageDigest != "" {
				image = e.imageDigest
			}
			out := e.onNode(ctx, node, "/usr/local/bin/pv-rollout", "enable", "--image", image)
			GinkgoWriter.Printf("step %d, %s: pv-rollout enable --image %s: %s", i+1, node, image, out)
			Eventually(ctx, kcmCommandOn(ctx, node)).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(ContainSubstring("-persistentvolume-binder-controller"))
			Eventually(ctx, staticPod(ctx, "pv-controller-manager", node, false)).WithTimeout(2 * time.Minute).WithPolling(time.Second).
				ShouldNot(BeNil())
			// Pairs keep coming after the node is switched, while KCM's Lease may move.
			switched := time.Now()
			Eventually(ctx, func() int { return feeder.createdSince(switched) }).WithTimeout(time.Minute).Should(BeNumerically(">=", 20))
			n, _ := feeder.waitAllBound(ctx, 60*time.Second)
			after := kcmLeaseHolder(ctx)
			leaderPod, _ := client.CoreV1().Pods("kube-system").Get(ctx, "kube-controller-manager-"+holderNode(after), metav1.GetOptions{})
			leaderBinderOff := leaderPod != nil && strings.Contains(strings.Join(leaderPod.Spec.Containers[0].Command, " "), "-persistentvolume-binder-controller")
			ours, _ := leaseHolder(ctx)()
			AddReportEntry(fmt.Sprintf("step %d (%s rolled)", i+1, node), fmt.Sprintf(
				"%d pairs so far all Bound; slowest bind this step %s; KCM Lease %s -> %s (its binder on: %v); our Lease %s",
				n, feeder.slowestSince(stepStart).Round(10*time.Millisecond), holderNode(before), holderNode(after), !leaderBinderOff, holderNode(ours)))
		}
		feeder.Stop()
		n, slowest := feeder.waitAllBound(ctx, 60*time.Second)
		Expect(expectOneToOne(ctx, ns)).To(Equal(n))
		AddReportEntry("rollout", fmt.Sprintf("%d pairs, all Bound one to one; slowest bind %s", n, slowest.Round(10*time.Millisecond)))
		// Every node rolled: KCM's binder runs nowhere, ours leads.
		Eventually(ctx, func() string { return holderNode(kcmLeaseHolder(ctx)) }).WithTimeout(time.Minute).WithPolling(time.Second).
			Should(BeElementOf(e.controlPlanes))
		Eventually(ctx, leaseHolder(ctx)).WithTimeout(30 * time.Second).Should(Not(BeEmpty()))
		out := e.expectActiveBinder(ctx, e.controlPlanes[0], "pv-controller-manager", "--canary-namespace", newNamespace(ctx))
		Expect(out).To(ContainSubstring("canary: a pre-bound claim"))
	})
})

var _ = Describe("kind: after the rollout", Serial, Label("kind"), func() {
	var e kindEnv
	BeforeEach(func() { e = kindSetup() })

	It("mounts a pre-bound hostPath volume on the worker in a running pod", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		dir := "/var/local/pvcm-e2e/" + ns
		pv := volume(ns, "mounted", "1Gi", "")
		pv.Spec.HostPath = &v1.HostPathVolumeSource{Path: dir, Type: ptr.To(v1.HostPathDirectoryOrCreate)}
		pv.Spec.NodeAffinity = workerAffinity(e.worker)
		pv = createVolume(ctx, pv)
		createClaim(ctx, claim(ns, "mounted", "1Gi", "", pv.Name))
		pod := writerPod(ns, "writer", "mounted", e.testImage)
		_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, func() (*v1.Pod, error) { return client.CoreV1().Pods(ns).Get(ctx, "writer", metav1.GetOptions{}) }).
			WithTimeout(2 * time.Minute).Should(And(HaveField("Spec.NodeName", e.worker), HaveField("Status.Phase", v1.PodRunning)))
		Eventually(ctx, getClaim(ctx, ns, "mounted")).Should(claimPhase(v1.ClaimBound))
		// The pod wrote its name into the volume: the directory on the worker is the PV we bound.
		Eventually(ctx, func() string {
			out, _ := exec.CommandContext(ctx, e.engine, "exec", e.worker, "cat", dir+"/owner").CombinedOutput()
			return strings.TrimSpace(string(out))
		}).WithTimeout(30 * time.Second).Should(Equal("writer"))
	})

	It("binds WaitForFirstConsumer local volumes the scheduler picked, and the pods run", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		class := &storagev1.StorageClass{
			ObjectMeta:        metav1.ObjectMeta{Name: ns + "-local"},
			Provisioner:       "kubernetes.io/no-provisioner",
			VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		}
		_, err := client.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			_ = client.StorageV1().StorageClasses().Delete(ctx, class.Name, metav1.DeleteOptions{})
		})
		const n = 3
		start := time.Now()
		for i := range n {
			name := fmt.Sprintf("local-%d", i)
			dir := fmt.Sprintf("/var/local/pvcm-e2e/%s/%s", ns, name)
			e.onNode(ctx, e.worker, "mkdir", "-p", dir)
			pv := volume(ns, name, fmt.Sprintf("%dGi", i+1), class.Name)
			pv.Spec.HostPath = nil
			pv.Spec.Local = &v1.LocalVolumeSource{Path: dir}
			pv.Spec.NodeAffinity = workerAffinity(e.worker)
			createVolume(ctx, pv)
			createClaim(ctx, claim(ns, name, "1Gi", class.Name, ""))
			_, err := client.CoreV1().Pods(ns).Create(ctx, writerPod(ns, name, name, e.testImage), metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		for i := range n {
			name := fmt.Sprintf("local-%d", i)
			Eventually(ctx, func() (*v1.Pod, error) { return client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}) }).
				WithTimeout(2 * time.Minute).Should(And(HaveField("Spec.NodeName", e.worker), HaveField("Status.Phase", v1.PodRunning)))
		}
		AddReportEntry("WaitForFirstConsumer", fmt.Sprintf("%d pods from creation to Running, claims Bound: %s", n, time.Since(start).Round(100*time.Millisecond)))
		seen := map[string]string{}
		for i := range n {
			name := fmt.Sprintf("local-%d", i)
			c, err := getClaim(ctx, ns, name)()
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Status.Phase).To(Equal(v1.ClaimBound))
			Expect(seen).NotTo(HaveKey(c.Spec.VolumeName), "one volume, two claims")
			seen[c.Spec.VolumeName] = name
			pv, err := getVolume(ctx, c.Spec.VolumeName)()
			Expect(err).NotTo(HaveOccurred())
			Expect(pv.Spec.ClaimRef.UID).To(Equal(c.UID))
		}
	})

	It("survives losing the leader's node: another node's instance takes the Lease and binds; the node back, nothing bound twice", func(ctx SpecContext) {
		var holder string
		Eventually(ctx, func() (string, error) {
			var err error
			holder, err = leaseHolder(ctx)()
			return holder, err
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Not(BeEmpty()), "our Lease is held")
		lost := holderNode(holder)
		Expect(lost).To(BeElementOf(e.controlPlanes), "our leader runs on a control-plane node")
		ns := newNamespace(ctx)
		feeder := startPairFeeder(ctx, ns, 500*time.Millisecond)
		defer feeder.Stop()

		stopped := time.Now()
		e.engineRun(ctx, "stop", "--time", "2", lost)
		DeferCleanup(func(ctx SpecContext) { _ = exec.CommandContext(ctx, e.engine, "start", lost).Run() })
		Eventually(ctx, func() string { h, _ := leaseHolder(ctx)(); return holderNode(h) }).
			WithTimeout(90 * time.Second).WithPolling(time.Second).Should(And(Not(BeEmpty()), Not(Equal(lost))))
		h, _ := leaseHolder(ctx)()
		takeover := time.Since(stopped)
		n, _ := feeder.waitAllBound(ctx, 2*time.Minute)
		AddReportEntry("leader node lost", fmt.Sprintf("%s stopped; %s took our Lease after %s; %d pairs Bound, slowest since the stop %s",
			lost, holderNode(h), takeover.Round(100*time.Millisecond), n, feeder.slowestSince(stopped).Round(10*time.Millisecond)))

		e.engineRun(ctx, "start", lost)
		// Back: our static pod on that node started again (after the stop), as a standby.
		Eventually(ctx, func() (time.Time, error) {
			pod, err := staticPod(ctx, "pv-controller-manager", lost, false)()
			if err != nil {
				return time.Time{}, err
			}
			if len(pod.Status.ContainerStatuses) == 0 || pod.Status.ContainerStatuses[0].State.Running == nil {
				return time.Time{}, fmt.Errorf("%s not running", pod.Name)
			}
			return pod.Status.ContainerStatuses[0].State.Running.StartedAt.Time, nil
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(BeTemporally(">", stopped))
		back := time.Now()
		Eventually(ctx, func() int { return feeder.createdSince(back) }).WithTimeout(time.Minute).Should(BeNumerically(">=", 20))
		feeder.Stop()
		n, slowest := feeder.waitAllBound(ctx, 2*time.Minute)
		Expect(expectOneToOne(ctx, ns)).To(Equal(n))
		AddReportEntry("leader node back", fmt.Sprintf("%d pairs in all, Bound one to one; slowest bind %s", n, slowest.Round(10*time.Millisecond)))
	})
})

var _ = Describe("kind: rollout disable", Ordered, Serial, Label("kind", "kind-disable"), func() {
	var e kindEnv
	BeforeAll(func() { e = kindSetup() })

	It("restores every node's KCM manifest byte for byte, and KCM binds again", func(ctx SpecContext) {
		for _, node := range e.controlPlanes {
			GinkgoWriter.Printf("%s: %s", node, e.onNode(ctx, node, "/usr/local/bin/pv-rollout", "disable"))
			want, err := os.ReadFile(filepath.Join(e.originals, node+".yaml"))
			Expect(err).NotTo(HaveOccurred())
			Expect(e.onNode(ctx, node, "cat", "/etc/kubernetes/manifests/kube-controller-manager.yaml")).To(Equal(string(want)), node)
			Expect(e.onNode(ctx, node, "ls", "/etc/kubernetes/manifests")).NotTo(ContainSubstring("pv-controller-manager"))
		}
		for _, node := range e.controlPlanes {
			Eventually(ctx, kcmCommandOn(ctx, node)).WithTimeout(3 * time.Minute).WithPolling(time.Second).ShouldNot(ContainSubstring("-persistentvolume-binder-controller"))
			Eventually(ctx, func() error {
				_, err := client.CoreV1().Pods("kube-system").Get(ctx, "pv-controller-manager-"+node, metav1.GetOptions{})
				return err
			}).WithTimeout(2*time.Minute).Should(HaveOccurred(), "our mirror pod is gone")
		}
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "kcm-again", "1Gi", ""))
		createClaim(ctx, claim(ns, "kcm-again", "1Gi", "", pv.Name))
		Eventually(ctx, getClaim(ctx, ns, "kcm-again")).WithTimeout(2 * time.Minute).Should(claimPhase(v1.ClaimBound))
		Expect(expectOneToOne(ctx, ns)).To(Equal(1))
		e.expectActiveBinder(ctx, e.controlPlanes[0], "kube-controller-manager")
	})

	It("uninstalls: no file of ours on any node, no object of ours in the cluster, and KCM binds", func(ctx SpecContext) {
		before := ourObjects(ctx)
		Expect(before).NotTo(BeEmpty(), "the RBAC make e2e-kind applied")
		for _, node := range e.controlPlanes {
			GinkgoWriter.Printf("%s: %s", node, e.onNode(ctx, node, "/usr/local/bin/pv-rollout", "uninstall"))
			Expect(e.onNode(ctx, node, "sh", "-c", "ls /etc/kubernetes/manifests /etc/kubernetes; ls -d /etc/kubernetes/pv-controller-manager-backup 2>/dev/null || true")).
				NotTo(ContainSubstring("pv-controller-manager"), "files of ours left on %s", node)
			Expect(e.onNode(ctx, node, "cat", "/etc/kubernetes/manifests/kube-controller-manager.yaml")).To(Equal(string(readOriginal(e, node))), node)
		}
		out, err := exec.CommandContext(ctx, e.engine, "exec", e.controlPlanes[0], "/usr/local/bin/pv-rollout", "uninstall", "--cluster").CombinedOutput()
		GinkgoWriter.Printf("pv-rollout uninstall --cluster: %s", out)
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(ourObjects(ctx)).To(BeEmpty(), "objects of ours left after uninstall (before: %v)", before)
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "after-uninstall", "1Gi", ""))
		createClaim(ctx, claim(ns, "after-uninstall", "1Gi", "", pv.Name))
		Eventually(ctx, getClaim(ctx, ns, "after-uninstall")).WithTimeout(2 * time.Minute).Should(claimPhase(v1.ClaimBound))
	})
})

// ourObjects lists what carries our label in every kind deploy/ installs, and our Leases.
func ourObjects(ctx context.Context) []string {
	selector := metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=pv-controller-manager"}
	lists := map[string]func() (runtime.Object, error){
		"clusterrole":        func() (runtime.Object, error) { return client.RbacV1().ClusterRoles().List(ctx, selector) },
		"clusterrolebinding": func() (runtime.Object, error) { return client.RbacV1().ClusterRoleBindings().List(ctx, selector) },
		"role":               func() (runtime.Object, error) { return client.RbacV1().Roles("").List(ctx, selector) },
		"rolebinding":        func() (runtime.Object, error) { return client.RbacV1().RoleBindings("").List(ctx, selector) },
		"flowschema":         func() (runtime.Object, error) { return client.FlowcontrolV1().FlowSchemas().List(ctx, selector) },
		"service":            func() (runtime.Object, error) { return client.CoreV1().Services("").List(ctx, selector) },
		"configmap":          func() (runtime.Object, error) { return client.CoreV1().ConfigMaps("").List(ctx, selector) },
	}
	var found []string
	for kind, list := range lists {
		l, err := list()
		Expect(err).NotTo(HaveOccurred(), kind)
		items, err := apimeta.ExtractList(l)
		Expect(err).NotTo(HaveOccurred(), kind)
		for _, item := range items {
			m, err := apimeta.Accessor(item)
			Expect(err).NotTo(HaveOccurred(), kind)
			found = append(found, strings.TrimSuffix(kind+"/"+m.GetNamespace(), "/")+"/"+m.GetName())
		}
	}
	for _, name := range []string{"pv-controller-manager", "pv-controller-manager-shadow"} {
		if _, err := client.CoordinationV1().Leases("kube-system").Get(ctx, name, metav1.GetOptions{}); err == nil {
			found = append(found, "lease/kube-system/"+name)
		}
	}
	slices.Sort(found)
	return found
}

// writeOnNode replaces a file's content on node, keeping its owner and mode.
func (e kindEnv) writeOnNode(ctx context.Context, node, path string, data []byte) {
	cmd := exec.CommandContext(ctx, e.engine, "exec", "-i", node, "sh", "-c", "cat > "+path)
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "writing %s on %s: %s", path, node, out)
}

func workerAffinity(worker string) *v1.VolumeNodeAffinity {
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: []string{worker}}},
	}}}}
}

// writerPod writes its own name into the claim's volume, then stays Running.
func writerPod(ns, name, claimName, image string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []v1.Container{{
				Name: "writer", Image: image, ImagePullPolicy: v1.PullIfNotPresent,
				Command:      []string{"/bin/sh", "-c", "echo $POD_NAME > /data/owner && exec /bin/busybox sleep 3600"},
				Env:          []v1.EnvVar{{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}}},
		},
	}
}
