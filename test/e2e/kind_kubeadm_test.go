package e2e

// make e2e-kind's last pass (label kind-kubeadm): a second kind cluster created with the kubeadm
// recipe of docs/install.md 2a, as an operator makes a new cluster. hack/e2e/e2e-kind.sh gives kind
// deploy/kubeadm/cluster-configuration.yaml as a kubeadm config patch (KCM's binder off in the
// ClusterConfiguration) and mounts our static pod manifest into every control-plane node's
// /etc/kubernetes/manifests before kubeadm runs; it copies the identity script and deploy/rbac to
// each node. Step 3 of the recipe (the identity script) is run here, so that the spec sees claims
// wait while no binder runs at all.

import (
	"fmt"
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
})
