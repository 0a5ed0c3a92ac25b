package rollout

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var ourManifest = []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: pv-controller-manager\nspec:\n  containers:\n  - name: pv-controller-manager\n    image: pv-controller-manager.local/pv-controller-manager:dev\n")

// stamped is manifest as Enable installs it.
func stamped(t *testing.T, manifest []byte) []byte {
	t.Helper()
	out, _, err := Stamp(manifest)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func newNode(t *testing.T, kcm []byte) Options {
	t.Helper()
	root := t.TempDir()
	o := Options{
		ManifestsDir: filepath.Join(root, "manifests"),
		BackupDir:    filepath.Join(root, "pv-controller-manager-backup"),
		OurManifest:  ourManifest,
		Log:          t.Logf,
	}
	if err := os.MkdirAll(o.ManifestsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.ManifestsDir, KCMManifestName), kcm, 0o600); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestEnableDisableRestoresExactly(t *testing.T) {
	original := readFile(t, "testdata/kubeadm.yaml")
	o := newNode(t, original)
	kcmPath := filepath.Join(o.ManifestsDir, KCMManifestName)
	ourPath := filepath.Join(o.ManifestsDir, OurManifestName)

	for i := 0; i < 2; i++ { // the second run must change nothing
		if err := Enable(o); err != nil {
			t.Fatalf("Enable #%d: %v", i+1, err)
		}
		if got, want := readFile(t, kcmPath), readFile(t, "testdata/kubeadm.disabled.golden"); !bytes.Equal(got, want) {
			t.Fatalf("KCM manifest after Enable #%d:\n%s", i+1, got)
		}
		if got := readFile(t, filepath.Join(o.BackupDir, KCMManifestName)); !bytes.Equal(got, original) {
			t.Fatalf("backup after Enable #%d is not the original", i+1)
		}
		if got := readFile(t, ourPath); !bytes.Equal(got, stamped(t, ourManifest)) {
			t.Fatalf("our manifest not installed")
		}
	}
	entries, _ := os.ReadDir(o.ManifestsDir)
	if len(entries) != 2 {
		t.Errorf("manifests dir holds %d files, want KCM's and ours only", len(entries))
	}

	for i := 0; i < 2; i++ {
		if err := Disable(o); err != nil {
			t.Fatalf("Disable #%d: %v", i+1, err)
		}
		if got := readFile(t, kcmPath); !bytes.Equal(got, original) {
			t.Fatalf("KCM manifest after Disable #%d is not the original:\n%s", i+1, got)
		}
		if _, err := os.Stat(ourPath); !os.IsNotExist(err) {
			t.Fatalf("our manifest still there after Disable #%d", i+1)
		}
	}
	if st, err := os.Stat(kcmPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("KCM manifest mode changed: %v %v", st.Mode(), err)
	}
}

func TestEnableAfterKubeadmUpgradeReplacesTheBackup(t *testing.T) {
	o := newNode(t, readFile(t, "testdata/kubeadm.yaml"))
	if err := Enable(o); err != nil {
		t.Fatal(err)
	}
	// kubeadm upgrade rewrites the manifest: new image, binder back on.
	upgraded := bytes.ReplaceAll(readFile(t, "testdata/kubeadm.yaml"), []byte("v1.37.2"), []byte("v1.38.0"))
	kcmPath := filepath.Join(o.ManifestsDir, KCMManifestName)
	if err := os.WriteFile(kcmPath, upgraded, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Enable(o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(o.BackupDir, KCMManifestName)); !bytes.Equal(got, upgraded) {
		t.Fatalf("backup is not the upgraded manifest")
	}
	if err := Disable(o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, kcmPath); !bytes.Equal(got, upgraded) {
		t.Fatalf("Disable did not restore the upgraded manifest")
	}
}

func TestDisableKeepsLaterEdits(t *testing.T) {
	o := newNode(t, readFile(t, "testdata/kubeadm.yaml"))
	if err := Enable(o); err != nil {
		t.Fatal(err)
	}
	kcmPath := filepath.Join(o.ManifestsDir, KCMManifestName)
	edited := bytes.Replace(readFile(t, kcmPath), []byte("--leader-elect=true"), []byte("--leader-elect=true\n    - --v=4"), 1)
	if err := os.WriteFile(kcmPath, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Disable(o); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, kcmPath)
	if !strings.Contains(string(got), "--v=4") {
		t.Errorf("the operator's later edit was lost")
	}
	if on, _ := BinderEnabled(got); !on {
		t.Errorf("binder not switched back on")
	}
	if _, err := os.Stat(filepath.Join(o.BackupDir, KCMManifestName)); err != nil {
		t.Errorf("backup should be kept when it was not restored: %v", err)
	}
}

func TestEnableRefusesBackupInManifestsDir(t *testing.T) {
	o := newNode(t, readFile(t, "testdata/kubeadm.yaml"))
	o.BackupDir = o.ManifestsDir + "/"
	if err := Enable(o); err == nil || !strings.Contains(err.Error(), "kubelet would run the backup") {
		t.Fatalf("Enable = %v, want refusal", err)
	}
}

func TestEnableLeavesNothingOnBadManifest(t *testing.T) {
	bad := readFile(t, "testdata/invalid/flow-list.yaml")
	o := newNode(t, bad)
	if err := Enable(o); err == nil {
		t.Fatal("Enable of a manifest it cannot edit: want an error")
	}
	if got := readFile(t, filepath.Join(o.ManifestsDir, KCMManifestName)); !bytes.Equal(got, bad) {
		t.Error("KCM manifest changed")
	}
	if _, err := os.Stat(filepath.Join(o.ManifestsDir, OurManifestName)); !os.IsNotExist(err) {
		t.Error("our manifest installed although KCM still runs its binder")
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	original := readFile(t, "testdata/kubeadm.yaml")
	o := newNode(t, original)
	o.DryRun = true
	if err := Enable(o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(o.ManifestsDir, KCMManifestName)); !bytes.Equal(got, original) {
		t.Error("dry run changed KCM's manifest")
	}
	if _, err := os.Stat(o.BackupDir); !os.IsNotExist(err) {
		t.Error("dry run created the backup dir")
	}
}

func TestEnableWithImage(t *testing.T) {
	o := newNode(t, readFile(t, "testdata/kubeadm.yaml"))
	o.Image = "registry.example/pvcm:v9"
	if err := Enable(o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(o.ManifestsDir, OurManifestName)); !strings.Contains(string(got), "image: registry.example/pvcm:v9\n") {
		t.Errorf("image not set:\n%s", got)
	}
}
