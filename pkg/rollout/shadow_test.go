package rollout

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpv/pv-controller-manager/deploy"
)

func TestShadowLeavesKCMAloneAndEnableReplacesIt(t *testing.T) {
	original := readFile(t, "testdata/kubeadm.yaml")
	o := newNode(t, original)
	o.OurManifest = deploy.StaticPodManifest
	o.Image = "registry.example/pv-controller-manager:v0.1.0"
	binding, err := SetImage(deploy.StaticPodManifest, o.Image)
	if err != nil {
		t.Fatal(err)
	}
	binding = stamped(t, binding)
	kcmPath := filepath.Join(o.ManifestsDir, KCMManifestName)
	ourPath := filepath.Join(o.ManifestsDir, OurManifestName)
	for i := range 2 {
		if err := Shadow(o); err != nil {
			t.Fatalf("Shadow #%d: %v", i+1, err)
		}
	}
	if got := readFile(t, kcmPath); !bytes.Equal(got, original) {
		t.Fatal("Shadow changed KCM's manifest")
	}
	shadow := readFile(t, ourPath)
	if strings.Count(string(shadow), "    - --shadow\n") != 1 || !strings.Contains(string(shadow), "- /usr/local/bin/pv-controller-manager\n    - --shadow\n") {
		t.Fatalf("our manifest in shadow mode:\n%s", shadow)
	}
	if err := Enable(o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, ourPath); !bytes.Equal(got, binding) {
		t.Fatal("enable after shadow must install the binding manifest")
	}
	if err := Shadow(o); err == nil || !strings.Contains(err.Error(), "runs without its binder") {
		t.Fatalf("Shadow where ours binds: %v, want a refusal", err)
	}
	if err := Disable(o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, kcmPath); !bytes.Equal(got, original) {
		t.Fatal("KCM's manifest not restored")
	}
}

func TestAddFlagRefusesAManifestItCannotEdit(t *testing.T) {
	if _, err := AddFlag(ourManifest, ShadowFlag); err == nil {
		t.Fatal("a manifest without the command line: want an error")
	}
}
