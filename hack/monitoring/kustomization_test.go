package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// deployMonitoring is what `kubectl apply -k deploy/monitoring` installs.
const deployMonitoring = "../../deploy/monitoring"

// TestKustomization renders deploy/monitoring as kubectl apply -k does (kustomize's krusty, the
// library kubectl embeds) with the release label as shipped and with another value written into
// kustomization.yaml: every object of deploy/monitoring's manifests is rendered, and every
// ServiceMonitor and PrometheusRule carries that value, so that one field selects them all.
func TestKustomization(t *testing.T) {
	shipped, err := os.ReadFile(filepath.Join(deployMonitoring, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const field = "    release: kube-prometheus-stack\n"
	if strings.Count(string(shipped), field) != 1 {
		t.Fatalf("kustomization.yaml: want exactly one line %q, the documented field", field)
	}
	for _, release := range []string{"kube-prometheus-stack", "prom-2"} {
		t.Run(release, func(t *testing.T) {
			fs := filesys.MakeFsInMemory()
			for _, f := range []string{"scrape/service.yaml", "scrape/metrics-reader-binding.yaml", "scrape/servicemonitor.yaml",
				"prometheus-rule.yaml", "grafana-dashboard-configmap.yaml", "rules.yaml"} {
				data, err := os.ReadFile(filepath.Join(deployMonitoring, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := fs.WriteFile(filepath.Join("/m", f), data); err != nil {
					t.Fatal(err)
				}
			}
			edited := strings.Replace(string(shipped), field, "    release: "+release+"\n", 1)
			if err := fs.WriteFile("/m/kustomization.yaml", []byte(edited)); err != nil {
				t.Fatal(err)
			}
			resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, "/m")
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, r := range resources.Resources() {
				kinds[r.GetKind()]++
				if got := r.GetLabels()["release"]; got != release {
					t.Errorf("%s %s/%s: label release=%q, want %q", r.GetKind(), r.GetNamespace(), r.GetName(), got, release)
				}
				switch r.GetKind() {
				case "ServiceMonitor", "PrometheusRule", "ConfigMap":
					if r.GetNamespace() != monitoringNamespace {
						t.Errorf("%s %s: namespace %q, want %q", r.GetKind(), r.GetName(), r.GetNamespace(), monitoringNamespace)
					}
				case "Service":
					// includeSelectors: false: the Service still selects our static pods only.
					sel, err := r.GetFieldValue("spec.selector")
					if err != nil {
						t.Fatal(err)
					}
					if m, _ := sel.(map[string]any); len(m) != 1 || m["component"] != "pv-controller-manager" {
						t.Errorf("Service %s: selector %v, want component: pv-controller-manager only", r.GetName(), sel)
					}
				}
			}
			for _, kind := range []string{"Service", "ClusterRoleBinding", "ServiceMonitor", "PrometheusRule", "ConfigMap"} {
				if kinds[kind] != 1 {
					t.Errorf("rendered %d %s, want 1 (all kinds: %v)", kinds[kind], kind, kinds)
				}
			}
		})
	}
}
