package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestMissingCaps(t *testing.T) {
	dir := t.TempDir()
	status := filepath.Join(dir, "status")
	// This machine's bounding set: everything up to CAP_CHECKPOINT_RESTORE but CAP_SYS_RESOURCE (24).
	if err := os.WriteFile(status, []byte("Name:\tx\nCapBnd:\t000001fffeffffff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := missingCaps(status)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"CAP_SYS_RESOURCE": true}; !reflect.DeepEqual(got, want) {
		t.Fatalf("missing = %v, want %v", got, want)
	}
	if err := os.WriteFile(status, []byte("CapBnd:\t000001ffffffffff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := missingCaps(status); len(got) != 0 {
		t.Fatalf("full set: missing = %v, want none", got)
	}
}

func TestRewrite(t *testing.T) {
	missing := map[string]bool{"CAP_SYS_RESOURCE": true}
	caps := func() map[string]any {
		return map[string]any{
			"bounding":  []any{"CAP_CHOWN", "CAP_SYS_RESOURCE"},
			"effective": []any{"CAP_SYS_RESOURCE", "CAP_KILL"},
		}
	}
	for _, tc := range []struct {
		name string
		args func(dir string) []string
		file string // relative to dir
		wrap bool   // file holds {"process": ...}
	}{
		{"docker create", func(d string) []string {
			return []string{"--root", "/run/runc", "--log", "/x/log.json", "--log-format", "json", "create", "--bundle", d, "--pid-file", "p", "id"}
		}, "config.json", true},
		{"containerd create with =", func(d string) []string {
			return []string{"--root=/run/runc", "create", "--bundle=" + d, "id"}
		}, "config.json", true},
		{"exec --process", func(d string) []string {
			return []string{"--root", "/run/runc", "exec", "--process", filepath.Join(d, "process.json"), "--detach", "id"}
		}, "process.json", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var doc map[string]any
			if tc.wrap {
				doc = map[string]any{"ociVersion": "1.0.2", "process": map[string]any{"capabilities": caps()}}
			} else {
				doc = map[string]any{"args": []any{"sh"}, "capabilities": caps()}
			}
			raw, _ := json.Marshal(doc)
			path := filepath.Join(dir, tc.file)
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := rewrite(tc.args(dir), missing); err != nil {
				t.Fatal(err)
			}
			raw, _ = os.ReadFile(path)
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			proc := got
			if tc.wrap {
				proc = got["process"].(map[string]any)
			}
			want := map[string]any{"bounding": []any{"CAP_CHOWN"}, "effective": []any{"CAP_KILL"}}
			if !reflect.DeepEqual(proc["capabilities"], want) {
				t.Fatalf("capabilities = %v, want %v", proc["capabilities"], want)
			}
		})
	}
}

func TestRewriteLeavesOtherCommandsAlone(t *testing.T) {
	// "state" and "delete" read no spec; the wrapper must not fail or touch anything.
	if err := rewrite([]string{"--root", "/run/runc", "state", "id"}, map[string]bool{"CAP_SYS_RESOURCE": true}); err != nil {
		t.Fatal(err)
	}
}
