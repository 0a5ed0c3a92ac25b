package rollout

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

var statusNow = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

func kcmPod(node string, binder, ready bool) *v1.Pod {
	controllers := "--controllers=*,bootstrapsigner,tokencleaner,-persistentvolume-binder-controller"
	if binder {
		controllers = "--controllers=*,bootstrapsigner,tokencleaner"
	}
	return staticMirrorPod("kube-controller-manager", node, []string{"kube-controller-manager", controllers}, ready)
}

func ourPod(node string, shadow, ready bool) *v1.Pod {
	command := []string{"/usr/local/bin/pv-controller-manager", "--leader-elect=true"}
	if shadow {
		command = append(command, ShadowFlag)
	}
	return staticMirrorPod("pv-controller-manager", node, command, ready)
}

func staticMirrorPod(component, node string, command []string, ready bool) *v1.Pod {
	status := v1.ConditionFalse
	if ready {
		status = v1.ConditionTrue
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: component + "-" + node, Namespace: "kube-system", Labels: map[string]string{"component": component}},
		Spec:       v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: component, Command: command}}},
		Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: status}},
			ContainerStatuses: []v1.ContainerStatus{{Name: component, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}},
	}
}

func lease(name, node string, age time.Duration) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node + "_0f0e"), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &metav1.MicroTime{Time: statusNow.Add(-age)}},
	}
}

// Which binder runs, in every state of a rollout and of its failures.
func TestObserve(t *testing.T) {
	cases := []struct {
		name       string
		objects    []runtime.Object
		binder     string
		node       string
		whyHas     string
		nodesTable string
	}{
		{name: "KCM only", objects: []runtime.Object{kcmPod("cp-1", true, true), kcmPod("cp-2", true, true), lease(KCMLeaseName, "cp-2", 2*time.Second)},
			binder: BinderKCM, node: "cp-2", nodesTable: "cp-1  binder on, Ready"},
		{name: "shadow beside KCM", objects: []runtime.Object{kcmPod("cp-1", true, true), ourPod("cp-1", true, true),
			lease(KCMLeaseName, "cp-1", time.Second), lease(ShadowLeaseName, "cp-1", time.Second)},
			binder: BinderKCM, node: "cp-1", nodesTable: "shadow, Ready"},
		{name: "mid-rollout: ours held, KCM's leader elsewhere binds", objects: []runtime.Object{kcmPod("cp-1", false, true), kcmPod("cp-2", true, true),
			ourPod("cp-1", false, false), lease(KCMLeaseName, "cp-2", time.Second), lease(OurLeaseName, "cp-1", time.Second)},
			binder: BinderKCM, node: "cp-2"},
		{name: "ours binds", objects: []runtime.Object{kcmPod("cp-1", false, true), kcmPod("cp-2", false, true), ourPod("cp-1", false, false), ourPod("cp-2", false, true),
			lease(KCMLeaseName, "cp-1", time.Second), lease(OurLeaseName, "cp-2", time.Second)},
			binder: BinderOurs, node: "cp-2", nodesTable: "cp-2  binder off, Ready        binding, Ready"},
		{name: "ours leads but is not Ready", objects: []runtime.Object{kcmPod("cp-1", false, true), ourPod("cp-1", false, false),
			lease(KCMLeaseName, "cp-1", time.Second), lease(OurLeaseName, "cp-1", time.Second)},
			binder: BinderNone, whyHas: "not Ready"},
		{name: "our Lease expired", objects: []runtime.Object{kcmPod("cp-1", false, true), ourPod("cp-1", false, true),
			lease(KCMLeaseName, "cp-1", time.Second), lease(OurLeaseName, "cp-1", time.Minute)},
			binder: BinderNone, whyHas: "nobody holds Lease kube-system/pv-controller-manager"},
		{name: "KCM's binder off, ours never started", objects: []runtime.Object{kcmPod("cp-1", false, true), lease(KCMLeaseName, "cp-1", time.Second)},
			binder: BinderNone, whyHas: "runs without its binder"},
		{name: "KCM's Lease holder just went (its binder off), ours not there", objects: []runtime.Object{kcmPod("cp-1", true, true),
			lease(KCMLeaseName, "cp-1", 20*time.Second)},
			binder: BinderNone, whyHas: "nobody holds Lease kube-system/kube-controller-manager"},
		{name: "a shadow replica holds our binding Lease", objects: []runtime.Object{kcmPod("cp-1", false, true), ourPod("cp-1", true, true),
			lease(KCMLeaseName, "cp-1", time.Second), lease(OurLeaseName, "cp-1", time.Second)},
			binder: BinderNone, whyHas: "shadow"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Observe(context.Background(), fake.NewClientset(tc.objects...), statusNow)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			st.Print(&out)
			if st.Binder != tc.binder || st.Node != tc.node || !strings.Contains(st.Why, tc.whyHas) {
				t.Errorf("binder %q on %q (%s), want %q on %q, why naming %q\n%s", st.Binder, st.Node, st.Why, tc.binder, tc.node, tc.whyHas, out.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if last := lines[len(lines)-1]; last != "active binder: "+tc.binder {
				t.Errorf("last line %q, want %q", last, "active binder: "+tc.binder)
			}
			if !strings.Contains(out.String(), tc.nodesTable) {
				t.Errorf("output lacks %q:\n%s", tc.nodesTable, out.String())
			}
		})
	}
}

// The canary's pair binds (here: a stand-in binder) and both objects are gone afterwards; when
// nothing binds it, it says so after its timeout and still deletes both.
func TestCanary(t *testing.T) {
	for _, binds := range []bool{true, false} {
		ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "canary"}}
		client := fake.NewClientset(ns)
		ctx, cancel := context.WithCancel(context.Background())
		if binds {
			go func() {
				for ctx.Err() == nil {
					claims, _ := client.CoreV1().PersistentVolumeClaims("canary").List(ctx, metav1.ListOptions{})
					for _, c := range claims.Items {
						if c.Status.Phase != v1.ClaimBound {
							c.Status.Phase = v1.ClaimBound
							_, _ = client.CoreV1().PersistentVolumeClaims("canary").UpdateStatus(ctx, &c, metav1.UpdateOptions{})
						}
					}
					time.Sleep(10 * time.Millisecond) // a stand-in binder's loop, not synchronisation
				}
			}()
		}
		// Where the stand-in binds, the timeout only bounds a failure; where nothing binds, only
		// the timeout ends the wait, so a short one decides nothing.
		timeout := 2 * time.Second
		if binds {
			timeout = 30 * time.Second
		}
		_, err := Canary(ctx, client, "canary", timeout)
		cancel()
		if binds != (err == nil) {
			t.Errorf("binds %v: Canary %v", binds, err)
		}
		if !binds && (err == nil || !strings.Contains(err.Error(), "not Bound after")) {
			t.Errorf("nothing binds: %v, want an error saying the claim was not Bound", err)
		}
		pvs, _ := client.CoreV1().PersistentVolumes().List(context.Background(), metav1.ListOptions{})
		claims, _ := client.CoreV1().PersistentVolumeClaims("canary").List(context.Background(), metav1.ListOptions{})
		if len(pvs.Items)+len(claims.Items) != 0 {
			t.Errorf("binds %v: %d volumes and %d claims left", binds, len(pvs.Items), len(claims.Items))
		}
	}
	if _, err := Canary(context.Background(), fake.NewClientset(), "missing", time.Second); err == nil || !strings.Contains(err.Error(), `canary namespace "missing"`) {
		t.Errorf("a namespace that does not exist: %v", err)
	}
}
