package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// rawArchive is where a committed run keeps its raw JSON (and control-plane scrapes, .prom): docs/results holds reports and plots,
// and a few hundred kilobytes of gzip instead of megabytes of JSON regenerate them.
const rawArchive = "raw.tar.gz"

// rawDir returns the directory holding dir's JSON: dir itself, or, when dir has raw.tar.gz, a
// temporary directory it was unpacked into (the caller removes it).
func rawDir(dir string) (string, error) {
	f, err := os.Open(filepath.Join(dir, rawArchive))
	if errors.Is(err, os.ErrNotExist) {
		return dir, nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", f.Name(), err)
	}
	out, err := os.MkdirTemp("", "benchreport-")
	if err != nil {
		return "", err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", f.Name(), err)
		}
		name := filepath.Base(h.Name)
		if h.Typeflag != tar.TypeReg || !(strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".prom")) {
			continue
		}
		w, err := os.Create(filepath.Join(out, name))
		if err != nil {
			return "", err
		}
		if _, err := io.Copy(w, tr); err != nil {
			w.Close()
			return "", fmt.Errorf("%s: %s: %w", f.Name(), h.Name, err)
		}
		if err := w.Close(); err != nil {
			return "", err
		}
	}
}
