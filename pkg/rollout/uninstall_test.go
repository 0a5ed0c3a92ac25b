package rollout

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

// deployObjects are the API objects of deploy/ (RBAC, FlowSchemas, monitoring), as an operator
// applies them; the static pod and files that are not Kubernetes objects are left out.
func deployObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	var objects []*unstructured.Unstructured
	err := filepath.WalkDir("../../deploy", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || strings.Contains(path, "static-pod") || strings.Contains(path, "/tests/") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var obj map[string]any
			if err := decoder.Decode(&obj); err != nil {
				break
			}
			u := &unstructured.Unstructured{Object: obj}
			if u.GetKind() == "" || u.GetAPIVersion() == "" || u.GetKind() == "Kustomization" || u.GetKind() == "ClusterConfiguration" ||
				strings.HasPrefix(u.GetAPIVersion(), "kubeadm.k8s.io") || strings.HasPrefix(u.GetAPIVersion(), "controlplane.cluster.x-k8s.io") {
				continue
			}
			objects = append(objects, u)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) < 10 {
		t.Fatalf("found %d objects in deploy/, fewer than the RBAC and monitoring objects", len(objects))
	}
	return objects
}

func resourceOf(kind string) string { return strings.ToLower(kind) + "s" }

// Every object deploy/ installs is one that uninstall --cluster deletes: of a kind it lists, with
// the label it selects.
func TestUninstallCoversEveryDeployedObject(t *testing.T) {
	for _, u := range deployObjects(t) {
		gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
		gvr := gv.WithResource(resourceOf(u.GetKind()))
		if !slices.Contains(OwnedResources, gvr) {
			t.Errorf("%s %s: %v is not in OwnedResources", u.GetKind(), u.GetName(), gvr)
		}
		if u.GetLabels()["app.kubernetes.io/name"] != "pv-controller-manager" {
			t.Errorf("%s %s lacks the label %s", u.GetKind(), u.GetName(), NameLabel)
		}
	}
}

// uninstall --cluster deletes every object of deploy/ and our Leases, nothing else, and only
// once no pod of ours runs.
func TestUninstallCluster(t *testing.T) {
	objects := deployObjects(t)
	foreign := &unstructured.Unstructured{}
	foreign.SetAPIVersion("rbac.authorization.k8s.io/v1")
	foreign.SetKind("ClusterRole")
	foreign.SetName("someone-elses")
	leases := []runtime.Object{}
	for _, name := range []string{OurLeaseName, ShadowLeaseName, KCMLeaseName} {
		l := &unstructured.Unstructured{}
		l.SetAPIVersion("coordination.k8s.io/v1")
		l.SetKind("Lease")
		l.SetNamespace("kube-system")
		l.SetName(name)
		leases = append(leases, l)
	}
	scheme := runtime.NewScheme()
	listKinds := map[schema.GroupVersionResource]string{
		{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}: "LeaseList",
		{Version: "v1", Resource: "persistentvolumeclaims"}:               "PersistentVolumeClaimList",
		{Version: "v1", Resource: "persistentvolumes"}:                    "PersistentVolumeList",
	}
	for _, gvr := range OwnedResources {
		listKinds[gvr] = "List"
	}
	for _, u := range objects {
		gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
		listKinds[gv.WithResource(resourceOf(u.GetKind()))] = u.GetKind() + "List"
	}
	all := append([]runtime.Object{foreign}, leases...)
	for _, u := range objects {
		all = append(all, u.DeepCopy())
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, listKinds, all...)
	var log []string
	logf := func(format string, args ...any) { log = append(log, format) }

	withPod := fake.NewClientset(ourPod("cp-1", false, true))
	if err := UninstallCluster(context.Background(), withPod, dyn, false, logf); err == nil || !strings.Contains(err.Error(), "still run") {
		t.Fatalf("with a pod of ours running: %v, want a refusal", err)
	}
	if err := UninstallCluster(context.Background(), fake.NewClientset(), dyn, true, logf); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	for _, u := range objects {
		gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
		if _, err := dyn.Resource(gv.WithResource(resourceOf(u.GetKind()))).Namespace(u.GetNamespace()).Get(context.Background(), u.GetName(), metav1.GetOptions{}); err != nil {
			t.Fatalf("dry run deleted %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	if err := UninstallCluster(context.Background(), fake.NewClientset(), dyn, false, logf); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	for _, u := range objects {
		gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
		if _, err := dyn.Resource(gv.WithResource(resourceOf(u.GetKind()))).Namespace(u.GetNamespace()).Get(context.Background(), u.GetName(), metav1.GetOptions{}); err == nil {
			t.Errorf("%s %s/%s left after uninstall", u.GetKind(), u.GetNamespace(), u.GetName())
		}
	}
	leaseGVR := schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	for name, want := range map[string]bool{OurLeaseName: false, ShadowLeaseName: false, KCMLeaseName: true} {
		_, err := dyn.Resource(leaseGVR).Namespace("kube-system").Get(context.Background(), name, metav1.GetOptions{})
		if (err == nil) != want {
			t.Errorf("Lease %s present %v, want %v", name, err == nil, want)
		}
	}
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}).
		Get(context.Background(), "someone-elses", metav1.GetOptions{}); err != nil {
		t.Errorf("an object without our label was deleted: %v", err)
	}
}

// uninstall on a node: KCM's binder back on, ours gone, then the identity's kubeconfig and the
// empty backup directory; when the rollback cannot complete, nothing else is removed.
func TestUninstallNode(t *testing.T) {
	original := readFile(t, "testdata/kubeadm.yaml")
	o := newNode(t, original)
	if err := Enable(o); err != nil {
		t.Fatal(err)
	}
	o.KubeconfigPath = filepath.Join(t.TempDir(), "pv-controller-manager.conf")
	if err := os.WriteFile(o.KubeconfigPath, []byte("kubeconfig"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.KCMCheck = func(context.Context, Want) error { return ErrNotYet }
	o.WaitTimeout, o.WaitInterval = 20*1e6, 1e6
	if err := UninstallNode(o); err == nil {
		t.Fatal("uninstall went on although KCM did not come back")
	}
	if _, err := os.Stat(o.KubeconfigPath); err != nil {
		t.Errorf("the identity was removed although the rollback did not complete: %v", err)
	}
	o.KCMCheck = nil
	if err := UninstallNode(o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(o.ManifestsDir, KCMManifestName)); !bytes.Equal(got, original) {
		t.Error("KCM's manifest is not the original")
	}
	for _, path := range []string{filepath.Join(o.ManifestsDir, OurManifestName), o.KubeconfigPath, o.BackupDir} {
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%s left after uninstall", path)
		}
	}
}
