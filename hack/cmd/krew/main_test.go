package main

import (
	"flag"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/pvc-why.yaml")

func TestManifestFromSums(t *testing.T) {
	f, err := os.Open("testdata/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	plugin, err := manifest(f, "v0.1.0", "https://example.invalid/releases/download")
	if err != nil {
		t.Fatal(err)
	}
	if len(plugin.Spec.Platforms) != 4 {
		t.Fatalf("%d platforms, want the 4 plugin archives (not the binder's)", len(plugin.Spec.Platforms))
	}
	for _, p := range plugin.Spec.Platforms {
		os, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		if !strings.HasSuffix(p.URI, "/v0.1.0/kubectl-pvc_why_v0.1.0_"+os+"_"+arch+".tar.gz") {
			t.Errorf("platform %s/%s has URI %s", os, arch, p.URI)
		}
		if len(p.Sha256) != 64 {
			t.Errorf("platform %s/%s: sha256 %q", os, arch, p.Sha256)
		}
	}
	got, err := yaml.Marshal(plugin)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/pvc-why.yaml", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/pvc-why.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("manifest differs from testdata/pvc-why.yaml (go test -update to accept):\n%s", got)
	}
}

func TestManifestRefusesBadSums(t *testing.T) {
	for name, sums := range map[string]string{
		"another version": "2c7f3d3f3f2fad7f4d3f4e5f60718293a4b5c6d7e8f901122334455667788aab  kubectl-pvc_why_v0.2.0_linux_amd64.tar.gz\n",
		"no archive":      "4e9f5f5f5f4fcf9f6f5f60718293a4b5c6d7e8f901122334455667788aabbccd  pv-controller-manager_v0.1.0_k8s1.37.2_linux_amd64.tar.gz\n",
	} {
		if _, err := manifest(strings.NewReader(sums), "v0.1.0", "https://example.invalid"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
