package rollout

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden runs the KCM manifest edit over real-world manifests: DisableBinder must give
// NAME.disabled.golden, be idempotent, and EnableBinder of that must give NAME.enabled.golden.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, input := range inputs {
		name := strings.TrimSuffix(filepath.Base(input), ".yaml")
		t.Run(name, func(t *testing.T) {
			original := readFile(t, input)
			disabled, err := DisableBinder(original)
			if err != nil {
				t.Fatalf("DisableBinder: %v", err)
			}
			compareGolden(t, "testdata/"+name+".disabled.golden", disabled)
			if on, err := BinderEnabled(disabled); err != nil || on {
				t.Errorf("binder still enabled after DisableBinder (err %v)", err)
			}
			again, err := DisableBinder(disabled)
			if err != nil || !bytes.Equal(again, disabled) {
				t.Errorf("DisableBinder is not idempotent (err %v):\n%s", err, again)
			}
			checkOnlyControllersLineDiffers(t, original, disabled)

			enabled, err := EnableBinder(disabled)
			if err != nil {
				t.Fatalf("EnableBinder: %v", err)
			}
			compareGolden(t, "testdata/"+name+".enabled.golden", enabled)
			if on, err := BinderEnabled(enabled); err != nil || !on {
				t.Errorf("binder not enabled after EnableBinder (err %v)", err)
			}
		})
	}
}

func TestInvalidManifests(t *testing.T) {
	for name, wantErr := range map[string]string{
		"separate-value": "edit the manifest by hand",
		"flow-list":      "edit the manifest by hand",
		"not-kcm":        "no kube-controller-manager container",
		"only-binder":    "no controller",
	} {
		t.Run(name, func(t *testing.T) {
			original := readFile(t, "testdata/invalid/"+name+".yaml")
			_, err := DisableBinder(original)
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("DisableBinder error = %v, want one containing %q", err, wantErr)
			}
		})
	}
}

func TestSetImage(t *testing.T) {
	in := []byte("spec:\n  containers:\n  - name: x\n    image: a/b:1\n    command: [x]\n")
	out, err := SetImage(in, "registry.example/pv-controller-manager:v2")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(string(in), "a/b:1", "registry.example/pv-controller-manager:v2", 1); string(out) != want {
		t.Errorf("SetImage = %q, want %q", out, want)
	}
	if _, err := SetImage([]byte("kind: Pod\n"), "x"); err == nil {
		t.Error("SetImage without an image line: want an error")
	}
}

// checkOnlyControllersLineDiffers: the edit touches the --controllers line and nothing else.
func checkOnlyControllersLineDiffers(t *testing.T, before, after []byte) {
	t.Helper()
	var b, a []string
	for _, l := range strings.Split(string(before), "\n") {
		if !strings.Contains(l, "--controllers") {
			b = append(b, l)
		}
	}
	for _, l := range strings.Split(string(after), "\n") {
		if !strings.Contains(l, "--controllers") {
			a = append(a, l)
		}
	}
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("lines other than --controllers changed")
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readFile(t, path)
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test ./pkg/rollout -update to accept):\n--- got\n%s", path, got)
	}
}
