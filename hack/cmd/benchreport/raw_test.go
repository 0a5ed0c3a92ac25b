package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestRawDirReadsTheArchiveOrTheDirectory(t *testing.T) {
	dir := t.TempDir()
	if got, err := rawDir(dir); err != nil || got != dir {
		t.Fatalf("without an archive: rawDir = %q, %v; want the directory itself", got, err)
	}
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "a-qps1-ours.json"), []byte(`{"x":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-czf", filepath.Join(dir, rawArchive), "-C", src, "a-qps1-ours.json").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
	got, err := rawDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(got, "a-qps1-ours.json"))
	if err != nil || string(data) != `{"x":1}` {
		t.Fatalf("unpacked file: %q, %v", data, err)
	}
	if err := os.WriteFile(filepath.Join(dir, rawArchive), []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := rawDir(dir); err == nil {
		t.Fatal("a corrupt archive must be an error, not an empty report")
	}
}
