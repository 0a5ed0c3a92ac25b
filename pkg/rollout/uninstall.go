package rollout

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/fastpv/pv-controller-manager/pkg/kcmargs"
)

// NameLabel is the label every object in deploy/ carries (deploy/rbac, deploy/monitoring); the
// cluster part of an uninstall deletes what carries it.
const NameLabel = "app.kubernetes.io/name=pv-controller-manager"

// OwnedResources are the kinds of the objects deploy/ installs (a test checks that every object
// there is of one of them and carries NameLabel). Kinds the cluster does not serve (no
// prometheus-operator) are skipped.
var OwnedResources = []schema.GroupVersionResource{
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "configmaps"},
	{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"},
	{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"},
}

// UninstallNode rolls this node back (Disable: KCM's binder on first, then our pod removed) and
// removes what was put on it for ours: the identity's kubeconfig (KubeconfigPath) and the backup
// directory once empty. A Disable that fails stops it: nothing else is removed then.
func UninstallNode(o Options) error {
	if err := Disable(o); err != nil {
		return err
	}
	if o.KubeconfigPath != "" {
		if _, err := os.Stat(o.KubeconfigPath); err == nil {
			o.logf("removing our identity's kubeconfig %s", o.KubeconfigPath)
			if !o.DryRun {
				if err := os.Remove(o.KubeconfigPath); err != nil {
					return err
				}
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	entries, err := os.ReadDir(o.BackupDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case len(entries) == 0:
		o.logf("removing the empty %s", o.BackupDir)
		if !o.DryRun {
			return os.Remove(filepath.Clean(o.BackupDir))
		}
	default:
		o.logf("keeping %s: it still holds %d file(s) (a KCM manifest backup kept because KCM's manifest changed since)", o.BackupDir, len(entries))
	}
	return nil
}

// UninstallCluster deletes the objects deploy/ installed (every object of OwnedResources that
// carries NameLabel, in every namespace), the Leases of ours and a canary's leftovers. It refuses
// while a pod of ours runs in kube-system: every node must be rolled back first (UninstallNode),
// or the replicas left would lose their RBAC while they may be the only binder.
func UninstallCluster(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, dryRun bool, logf func(string, ...any)) error {
	pods, err := client.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "component=pv-controller-manager"})
	if err != nil {
		return fmt.Errorf("listing our pods in kube-system: %w", err)
	}
	if n := len(pods.Items); n > 0 {
		names := []string{}
		for _, p := range pods.Items {
			names = append(names, p.Spec.NodeName)
		}
		return fmt.Errorf("%d pod(s) of ours still run (nodes %v): run `pv-rollout uninstall` on each of those nodes first", n, names)
	}
	del := func(gvr schema.GroupVersionResource, namespace, name string) error {
		what := gvr.Resource + " " + name
		if namespace != "" {
			what = gvr.Resource + " " + namespace + "/" + name
		}
		if dryRun {
			logf("(dry run) would delete %s", what)
			return nil
		}
		logf("deleting %s", what)
		err := dyn.Resource(gvr).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	var errs []error
	deleteLabelled := func(gvr schema.GroupVersionResource, selector string) {
		list, err := dyn.Resource(gvr).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if apierrors.IsNotFound(err) {
			return // a kind this cluster does not serve
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("listing %s: %w", gvr.Resource, err))
			return
		}
		for _, item := range list.Items {
			if err := del(gvr, item.GetNamespace(), item.GetName()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, gvr := range OwnedResources {
		deleteLabelled(gvr, NameLabel)
	}
	// Leftovers of a canary that could not clean up (claims first: a bound volume waits for them).
	deleteLabelled(schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, NameLabel+","+CanaryLabel+"=true")
	deleteLabelled(schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}, NameLabel+","+CanaryLabel+"=true")
	leases := schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	for _, name := range []string{OurLeaseName, ShadowLeaseName} {
		if err := del(leases, metav1.NamespaceSystem, name); err != nil {
			errs = append(errs, err)
		}
	}
	// A cluster made with the kubeadm recipe keeps KCM's binder off in kubeadm's own configuration:
	// the next kubeadm upgrade would render KCM without it again, with no binder left.
	if cm, err := client.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, "kubeadm-config", metav1.GetOptions{}); err == nil &&
		strings.Contains(cm.Data["ClusterConfiguration"], "-"+kcmargs.BinderController) {
		logf("WARNING: kube-system/kubeadm-config's ClusterConfiguration still turns KCM's binder off (-%s in controllerManager's controllers): "+
			"remove it (kubectl -n kube-system edit configmap kubeadm-config) before the next kubeadm upgrade, which would render KCM without its binder", kcmargs.BinderController)
	}
	return errors.Join(errs...)
}
