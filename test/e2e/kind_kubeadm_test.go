package e2e

// make e2e-kind's last pass (label kind-kubeadm): a second kind cluster created with the kubeadm
// recipe of docs/install.md 2a, as an operator makes a new cluster. hack/e2e/e2e-kind.sh gives kind
// deploy/kubeadm/cluster-configuration.yaml as a kubeadm config patch (KCM's binder off in the
// ClusterConfiguration) and mounts our static pod manifest into every control-plane node's
// /etc/kubernetes/manifests before kubeadm runs; it copies the identity script and deploy/rbac to
// each node. Step 3 of the recipe (the identity script) is run here, so that the spec sees claims
// wait while no binder runs at all. From the monitoring spec on, a real Prometheus and
// kube-state-metrics (kind_monitoring_test.go) watch the cluster through every state the rollout
// tool makes: ours binding, rolled back (KCM binds), shadow beside KCM's binder, no binder at all
// (KCM's off, ours never starts), rolled back again. In each, `pv-rollout status` on the first
// control-plane node names the binder that runs, and the alerts fire only when none does.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// The recipe's list: kubeadm's own (bootstrapsigner and tokencleaner: joins need them) minus the binder.
	recipeControllersArg = "--controllers=*,bootstrapsigner,tokencleaner,-persistentvolume-binder-controller"
	// What KCM's binder logs when it starts (pv_controller_base.go, Run) and what KCM logs for a
	// controller its --controllers leaves out (controllermanager.go).
	kcmBinderStartedLog  = "Starting persistent volume controller"
	kcmBinderDisabledLog = `"Warning: controller is disabled" controller="persistentvolume-binder-controller"`
)

var _ = Describe("kind: a new cluster from the kubeadm recipe", Ordered, Serial, Label("kind", "kind-kubeadm"), func() {
	var e kindEnv
	BeforeAll(func() { e = kindSetup() })
	// A real Prometheus scraping the installed binder (kind_monitoring_test.go), from the
	// monitoring spec to the last one.
	var prom *prometheusServer
	var ksm *kubeStateMetrics
	AfterAll(func() { prom.stop(); ksm.stop() })
	// onEveryControlPlane runs pv-rollout with args on each control-plane node in turn.
	onEveryControlPlane := func(ctx context.Context, args ...string) {
		for _, node := range e.controlPlanes {
			GinkgoWriter.Printf("%s: pv-rollout %s: %s", node, strings.Join(args, " "), e.onNode(ctx, node, append([]string{"/usr/local/bin/pv-rollout"}, args...)...))
		}
	}
	// expectActiveBinder: `pv-rollout status` on the first control-plane node ends with
	// "active binder: NAME" and exits 0 when a binder runs, 1 when none does.
	expectActiveBinder := func(ctx context.Context, name string) { e.expectActiveBinder(ctx, e.controlPlanes[0], name) }
	// expectNoAlerts: once the rules have been evaluated on fresh scrapes, no alert is pending or
	// firing, and none becomes so for 45 s (every `for` is promFor, 20 s).
	expectNoAlerts := func(ctx context.Context, state string) {
		Expect(prom).NotTo(BeNil(), "the monitoring spec started Prometheus")
		settled := time.Now().Add(10 * time.Second) // two scrapes of every target
		Eventually(ctx, func() error { return prom.evaluatedSince(ctx, settled) }).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		Eventually(ctx, prom.alerts).WithTimeout(2*time.Minute).WithPolling(3*time.Second).Should(BeEmpty(), "alerts %s", state)
		Consistently(ctx, prom.alerts).WithTimeout(45*time.Second).WithPolling(3*time.Second).Should(BeEmpty(), "alerts %s", state)
	}
	// A claim that stays Pending whoever binds: its class has no volume and no provisioner (kind's
	// default class is not it). Created after the first rollback, kept to the end.
	var pendingNS string
	AfterAll(func(ctx SpecContext) {
		if pendingNS != "" {
			_ = client.CoreV1().Namespaces().Delete(ctx, pendingNS, metav1.DeleteOptions{})
		}
	})

	It("runs KCM without its binder from the first boot; claims wait until the identity exists, then ours binds them one to one", func(ctx SpecContext) {
		config, err := client.CoreV1().ConfigMaps("kube-system").Get(ctx, "kubeadm-config", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(config.Data["ClusterConfiguration"]).To(ContainSubstring("-persistentvolume-binder-controller"),
			"kubeadm stored the recipe's controllers entry, so `kubeadm upgrade` keeps the binder off")
		for _, node := range e.controlPlanes {
			Eventually(ctx, kcmCommandOn(ctx, node)).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(ContainSubstring(recipeControllersArg), node)
			// Our manifest is there from the first boot; its pod waits for the kubeconfig (hostPath type File).
			Eventually(ctx, func() error {
				_, err := client.CoreV1().Pods("kube-system").Get(ctx, "pv-controller-manager-"+node, metav1.GetOptions{})
				return err
			}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), "our mirror pod on %s", node)
			Expect(e.onNode(ctx, node, "sh", "-c", "test -e /etc/kubernetes/pv-controller-manager.conf && echo present || echo absent")).
				To(Equal("absent\n"), node)
		}

		ns := newNamespace(ctx)
		const prebound, matched = 20, 5
		for i := range prebound {
			name := fmt.Sprintf("prebound-%02d", i)
			pv := createVolume(ctx, volume(ns, name, "1Gi", ""))
			createClaim(ctx, claim(ns, name, "1Gi", "", pv.Name))
		}
		for i := range matched {
			name := fmt.Sprintf("matched-%02d", i)
			// 2Gi and up: no pre-bound pair's free 1Gi volume fits a matched claim better.
			createVolume(ctx, volume(ns, name, fmt.Sprintf("%dGi", i+2), ""))
			createClaim(ctx, claim(ns, name, fmt.Sprintf("%dGi", i+2), "", ""))
		}
		// KCM is up on every node and runs every other controller; with its binder it would bind a
		// pre-bound pair within a second. Nothing binds these while ours has no identity.
		Consistently(ctx, func() (int, error) {
			claims, err := client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return 0, err
			}
			volumes, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: "e2e-namespace=" + ns})
			if err != nil {
				return 0, err
			}
			touched := 0 // a binder's marks: a claim Bound, a matched claim given a volume, a volume given a claimRef
			for _, c := range claims.Items {
				if c.Status.Phase == v1.ClaimBound || (strings.HasPrefix(c.Name, "matched-") && c.Spec.VolumeName != "") {
					touched++
				}
			}
			for _, pv := range volumes.Items {
				if pv.Spec.ClaimRef != nil {
					touched++
				}
			}
			return touched, nil
		}).WithTimeout(15*time.Second).WithPolling(time.Second).Should(BeZero(), "claims or volumes bound with no binder running")

		// Step 3 of the recipe on each control-plane node, as root.
		identityAt := time.Now()
		for _, node := range e.controlPlanes {
			GinkgoWriter.Printf("%s: %s", node, e.onNode(ctx, node, "/root/pv-controller-manager-identity.sh", "/root/rbac"))
		}
		for _, node := range e.controlPlanes {
			Eventually(ctx, staticPod(ctx, "pv-controller-manager", node, true)).WithTimeout(4*time.Minute).WithPolling(time.Second).
				ShouldNot(BeNil(), "our pod on %s Ready once its kubeconfig exists", node)
		}
		podsReady := time.Since(identityAt)
		Eventually(ctx, func() (string, error) {
			holder, err := leaseHolder(ctx)()
			return holderNode(holder), err
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(BeElementOf(e.controlPlanes))
		Eventually(ctx, func() error {
			claims, err := client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			var pending []string
			for _, c := range claims.Items {
				if c.Status.Phase != v1.ClaimBound {
					pending = append(pending, c.Name)
				}
			}
			if len(pending) > 0 {
				return fmt.Errorf("%d claims not Bound: %v", len(pending), pending)
			}
			return nil
		}).WithTimeout(2 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
		allBound := time.Since(identityAt)
		// Each matched claim has exactly one volume of its size, named after it: one to one by name too.
		Expect(expectOneToOne(ctx, ns)).To(Equal(prebound + matched))

		// KCM never ran its binder: no KCM container on any node (every restart included) logged the
		// binder's start, and the leader logged it disabled.
		disabledSeen := false
		for _, node := range e.controlPlanes {
			logs := e.onNode(ctx, node, "sh", "-c",
				"for c in $(crictl ps -a --name '^kube-controller-manager$' -q); do crictl logs $c 2>&1; done")
			Expect(logs).NotTo(BeEmpty(), "KCM's logs on %s", node)
			Expect(logs).NotTo(ContainSubstring(kcmBinderStartedLog), "KCM's binder started on %s", node)
			disabledSeen = disabledSeen || strings.Contains(logs, kcmBinderDisabledLog)
		}
		Expect(disabledSeen).To(BeTrue(), "the leading KCM logged %s", kcmBinderDisabledLog)
		AddReportEntry("kubeadm recipe", fmt.Sprintf(
			"KCM without its binder on %d control-plane nodes from the first boot; %d claims Pending for 15 s with no binder; "+
				"identity script run: our pods Ready after %s, all %d claims Bound one to one after %s",
			len(e.controlPlanes), prebound+matched, podsReady.Round(100*time.Millisecond), prebound+matched, allBound.Round(100*time.Millisecond)))
	})

	It("is scraped as installed: Prometheus finds every replica through deploy/monitoring/scrape, and no alert is pending or firing", func(ctx SpecContext) {
		binary := os.Getenv("E2E_PROMETHEUS")
		Expect(binary).NotTo(BeEmpty(), "hack/e2e/e2e-kind.sh sets E2E_PROMETHEUS (hack/cluster/build-tools.sh prometheus)")
		token, sm := installScraping(ctx)
		dir, err := os.MkdirTemp("", "e2e-prometheus-")
		Expect(err).NotTo(HaveOccurred())
		tokenFile := filepath.Join(dir, "token")
		Expect(os.WriteFile(tokenFile, []byte(token), 0o600)).To(Succeed())
		job := sm.Metadata.Labels["app.kubernetes.io/name"]
		ksmBinary := os.Getenv("E2E_KUBE_STATE_METRICS")
		Expect(ksmBinary).NotTo(BeEmpty(), "hack/e2e/e2e-kind.sh sets E2E_KUBE_STATE_METRICS (hack/cluster/build-tools.sh kube-state-metrics)")
		ksm = startKubeStateMetrics(ctx, ksmBinary, dir, os.Getenv("KUBECONFIG"))
		prom = startPrometheus(ctx, binary, dir, scrapeConfig(sm, tokenFile, os.Getenv("KUBECONFIG")), ksm.scrapeJob())

		// kube-state-metrics exports what the alerts read of it (metrics-used.txt, origin external),
		// with the labels they select; a claim so that claims' series exist.
		ns := newNamespace(ctx)
		createClaim(ctx, claim(ns, "unmatched", "1Gi", "e2e-monitoring-none", ""))
		external := map[string][]string{}
		for name, labels := range readMetricsUsed(map[string]bool{"external": true}) {
			if strings.HasPrefix(name, "kube_") {
				external[name] = labels
			}
		}
		Expect(external).To(HaveKey("kube_pod_info"))
		Eventually(ctx, func() ([]string, error) {
			exposition, err := ksm.metrics(ctx)
			return missingSeries(exposition, external), err
		}).WithTimeout(time.Minute).WithPolling(2*time.Second).Should(BeEmpty(), "series of %s kube-state-metrics does not export", metricsUsed)

		Eventually(ctx, func() error {
			targets, err := prom.targets(ctx, job)
			if err != nil {
				return err
			}
			if len(targets) != len(e.controlPlanes) {
				return fmt.Errorf("%d targets of job %q, want one per control-plane node (%d): %+v", len(targets), job, len(e.controlPlanes), targets)
			}
			for _, t := range targets {
				if t.Health != "up" {
					return fmt.Errorf("target %s on %s is %s: %s", t.Labels["instance"], t.Labels["node"], t.Health, t.LastError)
				}
			}
			return nil
		}).WithTimeout(2*time.Minute).WithPolling(2*time.Second).Should(Succeed(), "every replica scraped with the scraper's token (prometheus log %s)", prom.log)
		// Every alert's `for` is promFor: an expression that holds on a clean install shows here,
		// from the first evaluation that follows the scrapes of every replica.
		scrapedAt := time.Now()
		Eventually(ctx, func() error { return prom.evaluatedSince(ctx, scrapedAt) }).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		Consistently(ctx, prom.alerts).WithTimeout(45*time.Second).WithPolling(3*time.Second).Should(BeEmpty(), "alerts on a clean, healthy install")
		Eventually(ctx, func() (float64, error) { return prom.sample(ctx, `up{job="kube-state-metrics"}`) }).
			WithTimeout(time.Minute).WithPolling(2*time.Second).Should(BeNumerically("==", 1), "kube-state-metrics scraped")
		expectActiveBinder(ctx, "pv-controller-manager")
		Eventually(ctx, func() (float64, error) {
			return prom.sample(ctx, fmt.Sprintf(`count(pv_controller_manager_client_certificate_expiration_timestamp_seconds{job=%q} - time() > 300 * 24 * 3600)`, job))
		}).WithTimeout(time.Minute).WithPolling(2*time.Second).
			Should(BeNumerically("==", len(e.controlPlanes)), "each replica reports its identity's expiry, a year away (kubeadm's default)")
	})

	It("restarts a replica with its renewed certificate: the identity script run again, the later expiry reported", func(ctx SpecContext) {
		node := e.controlPlanes[0]
		query := fmt.Sprintf(`pv_controller_manager_client_certificate_expiration_timestamp_seconds{node=%q}`, node)
		var before float64
		Eventually(ctx, func() (err error) { before, err = prom.sample(ctx, query); return err }).
			WithTimeout(time.Minute).WithPolling(2*time.Second).Should(Succeed(), "the expiry of the replica on %s", node)
		var pod *v1.Pod
		Eventually(ctx, func() (err error) { pod, err = staticPod(ctx, "pv-controller-manager", node, true)(); return err }).
			WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed(), "our pod on %s Ready", node)
		restarts := pod.Status.ContainerStatuses[0].RestartCount

		// The runbook of PVControllerManagerClientCertificateExpiring: the recipe's identity step again.
		GinkgoWriter.Printf("%s: %s", node, e.onNode(ctx, node, "/root/pv-controller-manager-identity.sh", "/root/rbac"))
		Eventually(ctx, func() (float64, error) { return prom.sample(ctx, query) }).WithTimeout(3*time.Minute).WithPolling(2*time.Second).
			Should(BeNumerically(">", before), "the replica on %s reports the renewed certificate's expiry", node)
		Eventually(ctx, func() (int32, error) {
			pod, err := staticPod(ctx, "pv-controller-manager", node, true)()
			if err != nil {
				return 0, err
			}
			return pod.Status.ContainerStatuses[0].RestartCount, nil
		}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(BeNumerically(">", restarts), "our pod on %s restarted and Ready", node)
		Eventually(ctx, func() (string, error) {
			logs, err := client.CoreV1().Pods("kube-system").GetLogs(pod.Name, &v1.PodLogOptions{Previous: true}).DoRaw(ctx)
			return string(logs), err
		}).WithTimeout(time.Minute).WithPolling(2*time.Second).
			Should(ContainSubstring("The kubeconfig holds another client certificate"), "the replica said why it stopped")
		// And binding goes on.
		ns := newNamespace(ctx)
		pv := createVolume(ctx, volume(ns, "after-renewal", "1Gi", ""))
		createClaim(ctx, claim(ns, "after-renewal", "1Gi", "", pv.Name))
		Eventually(ctx, getClaim(ctx, ns, "after-renewal")).WithTimeout(time.Minute).Should(claimPhase(v1.ClaimBound))
	})

	// Rollback on a cluster the recipe made: there is no backup (kubeadm rendered KCM without its
	// binder), so disable switches the binder on in the current manifest; then our pod goes.
	It("rolls back with pv-rollout disable: KCM binds again, ours is gone, nothing was bound twice", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		for _, node := range e.controlPlanes {
			// kind can only place the recipe's manifest before kubeadm runs as a bind mount; on a
			// real node it is a file. Make it one (same bytes: the kubelet does not restart the pod).
			e.onNode(ctx, node, "sh", "-c", "f=/etc/kubernetes/manifests/pv-controller-manager.yaml; cp $f /root/ours.yaml && umount $f && cp /root/ours.yaml $f")
			out := e.onNode(ctx, node, "/usr/local/bin/pv-rollout", "disable")
			GinkgoWriter.Printf("%s: pv-rollout disable: %s", node, out)
			Expect(out).To(ContainSubstring("no backup"))
		}
		for _, node := range e.controlPlanes {
			Eventually(ctx, kcmCommandOn(ctx, node)).WithTimeout(3*time.Minute).WithPolling(time.Second).
				ShouldNot(ContainSubstring("-persistentvolume-binder-controller"), node)
			Expect(e.onNode(ctx, node, "ls", "/etc/kubernetes/manifests")).NotTo(ContainSubstring("pv-controller-manager"))
			Eventually(ctx, func() error {
				_, err := client.CoreV1().Pods("kube-system").Get(ctx, "pv-controller-manager-"+node, metav1.GetOptions{})
				return err
			}).WithTimeout(2*time.Minute).Should(HaveOccurred(), "our mirror pod on %s is gone", node)
		}
		const pairs = 5
		for i := range pairs {
			name := fmt.Sprintf("after-rollback-%d", i)
			pv := createVolume(ctx, volume(ns, name, "1Gi", ""))
			createClaim(ctx, claim(ns, name, "1Gi", "", pv.Name))
		}
		for i := range pairs {
			Eventually(ctx, getClaim(ctx, ns, fmt.Sprintf("after-rollback-%d", i))).WithTimeout(2 * time.Minute).Should(claimPhase(v1.ClaimBound))
		}
		Expect(expectOneToOne(ctx, ns)).To(Equal(pairs))
	})

	It("stays quiet after the rollback while KCM binds, with a claim that stays Pending", func(ctx SpecContext) {
		ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pv-e2e-alerts-"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		pendingNS = ns.Name // deleted by AfterAll: the later specs keep the claim
		createClaim(ctx, claim(pendingNS, "stays-pending", "1Gi", "e2e-no-provisioner", ""))
		Eventually(ctx, func() (float64, error) {
			return prom.sample(ctx, fmt.Sprintf(`kube_persistentvolumeclaim_status_phase{namespace=%q, phase="Pending"}`, pendingNS))
		}).WithTimeout(time.Minute).WithPolling(2*time.Second).Should(BeNumerically("==", 1), "Prometheus sees the claim Pending")
		Eventually(ctx, func() (float64, error) {
			return prom.sample(ctx, `count(kube_pod_info{namespace="kube-system", pod=~"pv-controller-manager-.+"}) or vector(0)`)
		}).WithTimeout(time.Minute).WithPolling(2*time.Second).Should(BeZero(), "none of our pods left")
		expectActiveBinder(ctx, "kube-controller-manager")
		expectNoAlerts(ctx, "after the rollback, KCM binding, a claim Pending")
	})

	It("stays quiet in shadow mode beside KCM's binder, with the claim still Pending", func(ctx SpecContext) {
		Expect(pendingNS).NotTo(BeEmpty(), "the rollback spec created the Pending claim")
		onEveryControlPlane(ctx, "shadow", "--image", e.image)
		for _, node := range e.controlPlanes {
			Eventually(ctx, staticPod(ctx, "pv-controller-manager", node, true)).WithTimeout(4*time.Minute).WithPolling(time.Second).
				ShouldNot(BeNil(), "our shadow pod on %s Ready", node)
		}
		Eventually(ctx, func() (float64, error) {
			return prom.sample(ctx, `count(up{job="pv-controller-manager"} == 1)`)
		}).WithTimeout(2*time.Minute).WithPolling(2*time.Second).Should(BeNumerically("==", len(e.controlPlanes)), "every shadow replica scraped")
		Eventually(ctx, func() (float64, error) {
			return prom.sample(ctx, `max(pv_controller_upstream_binder_active{job="pv-controller-manager"})`)
		}).WithTimeout(time.Minute).WithPolling(2*time.Second).Should(BeNumerically("==", 1), "the shadow replicas see KCM's binder")
		Eventually(ctx, getClaim(ctx, pendingNS, "stays-pending")).Should(claimPhase(v1.ClaimPending))
		expectActiveBinder(ctx, "kube-controller-manager")
		expectNoAlerts(ctx, "in shadow mode with a claim Pending")
		// The next spec's enable replaces the shadow manifests (after disable: the rollback spec).
	})

	It("fires PVBinderNoLeader and PVControllerManagerDown when no binder runs; binds again once rolled back", func(ctx SpecContext) {
		Expect(pendingNS).NotTo(BeEmpty(), "the rollback spec created the Pending claim")
		// KCM's binder off, ours never starts: its image is a tag the registry does not hold. enable
		// replaces the shadow manifests the previous spec installed.
		repo, _, _ := strings.Cut(e.image, "@")
		repo = repo[:strings.LastIndex(repo, "/")+1] + "pv-controller-manager"
		absent := repo + ":e2e-absent"
		onEveryControlPlane(ctx, "enable", "--wait-timeout=0", "--image", absent)
		for _, node := range e.controlPlanes {
			Eventually(ctx, kcmCommandOn(ctx, node)).WithTimeout(3*time.Minute).WithPolling(time.Second).
				Should(ContainSubstring("-persistentvolume-binder-controller"), node)
			Eventually(ctx, func() error {
				_, err := client.CoreV1().Pods("kube-system").Get(ctx, "pv-controller-manager-"+node, metav1.GetOptions{})
				return err
			}).WithTimeout(2*time.Minute).Should(Succeed(), "our mirror pod on %s (its container never starts)", node)
		}
		ns := newNamespace(ctx)
		const pairs = 3
		for i := range pairs {
			name := fmt.Sprintf("no-binder-%d", i)
			pv := createVolume(ctx, volume(ns, name, "1Gi", ""))
			createClaim(ctx, claim(ns, name, "1Gi", "", pv.Name))
		}
		expectActiveBinder(ctx, "none")
		Eventually(ctx, prom.alerts).WithTimeout(3*time.Minute).WithPolling(2*time.Second).
			Should(ContainElements("PVBinderNoLeader firing", "PVControllerManagerDown firing"), "no binder runs (prometheus log %s)", prom.log)
		for i := range pairs {
			Expect(getClaim(ctx, ns, fmt.Sprintf("no-binder-%d", i))()).To(claimPhase(v1.ClaimPending), "nothing binds")
		}

		// Rolled back: KCM's binder on again (the backup enable made), our pod removed.
		onEveryControlPlane(ctx, "disable")
		for _, node := range e.controlPlanes {
			Eventually(ctx, kcmCommandOn(ctx, node)).WithTimeout(3*time.Minute).WithPolling(time.Second).
				ShouldNot(ContainSubstring("-persistentvolume-binder-controller"), node)
		}
		for i := range pairs {
			Eventually(ctx, getClaim(ctx, ns, fmt.Sprintf("no-binder-%d", i))).WithTimeout(2 * time.Minute).Should(claimPhase(v1.ClaimBound))
		}
		Expect(expectOneToOne(ctx, ns)).To(Equal(pairs))
		expectActiveBinder(ctx, "kube-controller-manager")
		expectNoAlerts(ctx, "rolled back again, KCM binding")
	})
})
