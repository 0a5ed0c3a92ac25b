package rollout

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/fastpv/pv-controller-manager/pkg/upstreamguard"
)

// The binders Status names as active.
const (
	BinderKCM  = "kube-controller-manager"
	BinderOurs = "pv-controller-manager"
	BinderNone = "none"
)

// The Leases Status reads, in kube-system.
const (
	KCMLeaseName    = upstreamguard.DefaultLeaseName
	OurLeaseName    = "pv-controller-manager"
	ShadowLeaseName = "pv-controller-manager-shadow"
)

// NodeState is one control-plane node: its KCM and our pod, as their mirror pods say.
type NodeState struct {
	Node string
	// KCM is "binder on", "binder off" or "" (no KCM pod on the node).
	KCM      string
	KCMReady bool
	// Ours is "binding", "shadow" or "" (no pod of ours on the node).
	Ours      string
	OursReady bool
	// OursWaiting is why our container does not run (a waiting reason), if it does not.
	OursWaiting string
}

// LeaseState is a Lease's live holder ("" when nobody renewed it within its duration).
type LeaseState struct {
	Name   string
	Holder string
	Node   string
	Age    time.Duration
}

// ClusterState is which binder runs, and why: what `pv-rollout status` prints and what enable
// waits for once KCM's binder is off on its node.
type ClusterState struct {
	Nodes  []NodeState
	Leases []LeaseState
	// Binder is BinderKCM, BinderOurs or BinderNone; Node where it runs; Why says how that was decided.
	Binder, Node, Why string
}

// Observe reads KCM's and our pods in kube-system, the three Leases and the control-plane nodes,
// and decides which binder runs now. KCM binds when its Lease's live holder runs the binder; ours
// when our Lease's live holder is a binding (not shadow) replica that is Ready, which its /readyz
// is only when its caches have synced and KCM's binder is not running.
func Observe(ctx context.Context, client kubernetes.Interface, now time.Time) (*ClusterState, error) {
	pods, err := client.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
		LabelSelector: "component in (kube-controller-manager,pv-controller-manager)",
	})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of kube-controller-manager and pv-controller-manager in kube-system: %w", err)
	}
	nodes := map[string]*NodeState{}
	node := func(name string) *NodeState {
		if nodes[name] == nil {
			nodes[name] = &NodeState{Node: name}
		}
		return nodes[name]
	}
	// Every control-plane node is listed, also one where neither runs (reading nodes is optional).
	if list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"}); err == nil {
		for _, n := range list.Items {
			node(n.Name)
		}
	}
	kcmPods, ourPods := map[string]*v1.Pod{}, map[string]*v1.Pod{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
			continue
		}
		n := node(pod.Spec.NodeName)
		switch pod.Labels["component"] {
		case "kube-controller-manager":
			kcmPods[pod.Spec.NodeName] = pod
			n.KCM = "binder off"
			if _, on := upstreamguard.BinderControllers(pod); on {
				n.KCM = "binder on"
			}
			n.KCMReady = podReady(pod)
		case "pv-controller-manager":
			ourPods[pod.Spec.NodeName] = pod
			n.Ours = "binding"
			if isShadow(pod) {
				n.Ours = "shadow"
			}
			n.OursReady = podReady(pod)
			for _, s := range pod.Status.ContainerStatuses {
				if s.State.Waiting != nil {
					n.OursWaiting = s.State.Waiting.Reason
				}
			}
		}
	}
	st := &ClusterState{}
	for _, n := range nodes {
		st.Nodes = append(st.Nodes, *n)
	}
	slices.SortFunc(st.Nodes, func(a, b NodeState) int { return strings.Compare(a.Node, b.Node) })

	leases := map[string]LeaseState{}
	for _, name := range []string{KCMLeaseName, OurLeaseName, ShadowLeaseName} {
		lease, err := client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading Lease kube-system/%s: %w", name, err)
		}
		ls := LeaseState{Name: name}
		if err == nil {
			ls = liveHolder(lease, now)
		}
		leases[name] = ls
		st.Leases = append(st.Leases, ls)
	}

	kcm, ours := leases[KCMLeaseName], leases[OurLeaseName]
	switch pod := kcmPods[kcm.Node]; {
	case kcm.Holder != "" && pod != nil && nodes[kcm.Node].KCM == "binder on" && pod.Status.Phase == v1.PodRunning:
		st.Binder, st.Node, st.Why = BinderKCM, kcm.Node, fmt.Sprintf("KCM's Lease holder on %s runs its binder", kcm.Node)
		return st, nil
	case kcm.Holder != "" && pod != nil && nodes[kcm.Node].KCM == "binder on":
		st.Why = fmt.Sprintf("KCM's Lease holder on %s runs its binder but its pod is %s", kcm.Node, pod.Status.Phase)
	}
	switch pod := ourPods[ours.Node]; {
	case ours.Holder == "":
		st.Why = joinWhy(st.Why, "nobody holds Lease kube-system/"+OurLeaseName)
	case pod == nil:
		st.Why = joinWhy(st.Why, fmt.Sprintf("Lease kube-system/%s is held from %s, where no pod of ours runs", OurLeaseName, ours.Node))
	case isShadow(pod):
		st.Why = joinWhy(st.Why, fmt.Sprintf("our pod on %s, which holds Lease kube-system/%s, runs in shadow mode", ours.Node, OurLeaseName))
	case !podReady(pod):
		st.Why = joinWhy(st.Why, fmt.Sprintf("our leader on %s is not Ready (its /readyz: caches not synced, or KCM's binder still seen running)", ours.Node))
	default:
		st.Binder, st.Node, st.Why = BinderOurs, ours.Node, fmt.Sprintf("our Lease holder on %s is Ready", ours.Node)
		return st, nil
	}
	if kcm.Holder == "" {
		st.Why = joinWhy("nobody holds Lease kube-system/"+KCMLeaseName, st.Why)
	} else if nodes[kcm.Node] != nil && nodes[kcm.Node].KCM == "binder off" {
		st.Why = joinWhy(fmt.Sprintf("KCM's Lease holder on %s runs without its binder", kcm.Node), st.Why)
	}
	st.Binder = BinderNone
	return st, nil
}

func joinWhy(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "; " + b
}

// liveHolder is a Lease's holder when it was renewed within its duration by now (by the clocks of
// its holder and of this machine).
func liveHolder(lease *coordinationv1.Lease, now time.Time) LeaseState {
	ls := LeaseState{Name: lease.Name}
	holder, age, live := upstreamguard.LiveHolder(lease, now, time.Time{})
	if live {
		ls.Holder, ls.Node, ls.Age = holder, upstreamguard.HolderNode(holder), age
	}
	return ls
}

func isShadow(pod *v1.Pod) bool {
	for _, c := range pod.Spec.Containers {
		if slices.Contains(c.Command, ShadowFlag) || slices.Contains(c.Args, ShadowFlag) {
			return true
		}
	}
	return false
}

func podReady(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// Print writes the state as `pv-rollout status` shows it; its last line is "active binder: NAME".
func (st *ClusterState) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tKUBE-CONTROLLER-MANAGER\tPV-CONTROLLER-MANAGER")
	for _, n := range st.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n.Node, describe(n.KCM, n.KCMReady, ""), describe(n.Ours, n.OursReady, n.OursWaiting))
	}
	fmt.Fprintln(tw, "\nLEASE (kube-system)\tHOLDER\tRENEWED")
	for _, l := range st.Leases {
		if l.Holder == "" {
			fmt.Fprintf(tw, "%s\t-\t-\n", l.Name)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s ago\n", l.Name, l.Holder, l.Age)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\n%s\n", st.Why)
	fmt.Fprintf(w, "active binder: %s\n", st.Binder)
}

func describe(what string, ready bool, waiting string) string {
	switch {
	case what == "":
		return "-"
	case waiting != "":
		return what + ", " + waiting
	case ready:
		return what + ", Ready"
	default:
		return what + ", not Ready"
	}
}

// BinderRunsCheck is a PodCheck (its want is ignored) that passes while a binder runs: the one
// enable waits on after switching KCM's binder off on its node.
func BinderRunsCheck(client kubernetes.Interface) PodCheck {
	return func(ctx context.Context, _ Want) error {
		st, err := Observe(ctx, client, time.Now())
		if err != nil {
			return fmt.Errorf("%w: %v", ErrNotYet, err)
		}
		if st.Binder == BinderNone {
			return fmt.Errorf("%w: no binder runs: %s", ErrNotYet, st.Why)
		}
		return nil
	}
}
