package main

// The fixtures spell the words the checker refuses with one escaped letter (\x73, \x6f), so that
// this file, like every other text of the project, does not carry them.

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// testRepo is a repository of these files, their content as given.
func testRepo(files map[string]string) *repo {
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	return newRepo(paths, func(p string) (string, error) {
		text, ok := files[p]
		if !ok {
			return "", os.ErrNotExist
		}
		return text, nil
	})
}

var files = map[string]string{
	"README.md":               "# Project\n",
	"docs/install.md":         "# Install\n\n## Install steps\n\n## `make` and the *flags*\n\n## Steps\n\n## Steps\n",
	"docs/sub/b.md":           "b\n",
	"hack/x.sh":               "",
	"cmd/pvcm/main.go":        "",
	".ci/run":                 "",
	"Makefile":                "",
	"releases/v1.38/UPSTREAM": "",
}

func messages(fs []finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

func TestLinks(t *testing.T) {
	r := testRepo(files)
	for _, tc := range []struct {
		name, file, text string
		want             []string // substrings of the findings, in order; none for a good example
	}{
		{"relative file", "docs/README.md", "See [install](install.md).", nil},
		{"parent dir", "docs/sub/b.md", "[x](../../hack/x.sh) and [y](../install.md)", nil},
		{"directory", "docs/README.md", "[sub](sub/) [hack](../hack)", nil},
		{"root-relative", "docs/sub/b.md", "[x](/hack/x.sh)", nil},
		{"schemes", "README.md", "[a](https://example.com/x.md) [b](mailto:a@example.com) [c](http://x)", nil},
		{"title", "README.md", `[a](docs/install.md "Install")`, nil},
		{"angle brackets", "README.md", "[a](<docs/install.md>)", nil},
		{"percent-escaped", "README.md", "[a](docs/install%2Emd)", nil},
		{"anchor", "README.md", "[a](docs/install.md#install-steps) [b](docs/install.md#make-and-the-flags)", nil},
		{"repeated heading", "README.md", "[a](docs/install.md#steps-1)", nil},
		{"own anchor", "docs/x.md", "# Title\n\n## Why not\n\n[a](#why-not) [b](#Why-not)", nil},
		{"link in a code span", "README.md", "`[x](nope.md)`", nil},
		{"link in a fence", "README.md", "```sh\n[x](nope.md)\n```\n", nil},
		{"link in a tilde fence", "README.md", "~~~\n[x](nope.md)\n~~~\n", nil},
		{"anchor of a non-Markdown file", "README.md", "[x](hack/x.sh#L3)", nil},
		{"missing file", "README.md", "[x](nope.md)", []string{`README.md:1: link "nope.md": nope.md does not exist`}},
		{"missing, relative", "docs/sub/b.md", "text\n\nmore [x](../nope.md#a)", []string{`docs/sub/b.md:3: link "../nope.md#a": docs/nope.md does not exist`}},
		{"relative to the file, not the root", "docs/README.md", "[x](docs/install.md)", []string{"docs/docs/install.md does not exist"}},
		{"image", "README.md", "![logo](logo.png)", []string{"logo.png does not exist"}},
		{"leaves the repository", "docs/README.md", "[x](../../x.md)", []string{"leaves the repository"}},
		{"missing anchor", "README.md", "[x](docs/install.md#nope)", []string{`no heading with id "nope" in docs/install.md`}},
		{"missing own anchor", "README.md", "# A\n\n[x](#b)", []string{`README.md:3: link "#b": no heading with id "b" in this file`}},
		{"link text over two lines", "README.md", "a [long\ntext](nope.md)", []string{"README.md:2:"}},
		{"after an unclosed backtick", "README.md", "a ` b [x](nope.md)", []string{"nope.md does not exist"}},
		{"after a fence closes", "README.md", "```\nx\n```\n[x](nope.md)", []string{"README.md:4:"}},
		{"reference definition", "README.md", "[x]: nope.md", []string{"nope.md does not exist"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(checkMarkdown(r, tc.file, tc.text))
			if len(got) != len(tc.want) {
				t.Fatalf("findings %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("finding %q, want %q in it", got[i], w)
				}
			}
		})
	}
}

func TestPaths(t *testing.T) {
	r := testRepo(files)
	for _, tc := range []struct {
		span string
		bad  []string // the tokens reported
	}{
		{"hack/x.sh", nil},
		{"hack/x.sh:12", nil},
		{"hack/x.sh:12-20", nil},
		{"docs/sub/", nil},
		{"docs/install.md#steps", nil},
		{"go test ./hack/...", nil},
		{"cmd/pvcm/...", nil},
		{"make verify", nil},
		{"Makefile", nil},
		{".ci/run", nil},
		{"(hack/x.sh),", nil},
		{"FILE=hack/x.sh make", nil},
		{"hack/*.sh", nil},
		{"releases/<line>/go.mod", nil},
		{"releases/vX.Y/UPSTREAM", nil},
		{"patches/NNNN-name.patch", nil},
		{"hack/${NAME}.sh", nil},
		{"_output/tools/bin/etcd", nil},
		{"bin/pv-controller-manager", nil},
		{"K/pv_controller.go:1084-1105", nil},
		{"k8s.io/kubernetes/pkg/controller/volume", nil},
		{"/etc/kubernetes/manifests", nil},
		{"https://example.com/hack/x.sh", nil},
		{"cmd/kubelet", nil},
		{"pkg/scheduler/util/assumecache", nil},
		{"hack/nope.sh", []string{"hack/nope.sh"}},
		{"docs/sub/c.md:3", []string{"docs/sub/c.md:3"}},
		{"bash hack/x.sh hack/y.sh", []string{"hack/y.sh"}},
		{"cmd/pvcm/nope.go", []string{"cmd/pvcm/nope.go"}},
		{"./hack/nope/...", []string{"./hack/nope/..."}},
		{".ci/walk", []string{".ci/walk"}},
		{"releases/v1.39/UPSTREAM", []string{"releases/v1.39/UPSTREAM"}},
	} {
		t.Run(tc.span, func(t *testing.T) {
			fs := checkMarkdown(r, "docs/x.md", "a\n\nsee `"+tc.span+"` here")
			var got []string
			for _, f := range fs {
				if f.line != 3 {
					t.Errorf("finding on line %d, want 3", f.line)
				}
				got = append(got, strings.SplitN(f.msg, "`", 3)[1])
			}
			if !reflect.DeepEqual(got, tc.bad) {
				t.Errorf("reported %q, want %q", got, tc.bad)
			}
		})
	}
}

func TestCodeSpans(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []located
	}{
		{"a `x` b ``y ` z`` c", []located{{1, "x"}, {1, "y ` z"}}},
		{"a `hack/\nx.sh` b", []located{{1, "hack/ x.sh"}}},
		{"a \\`x` b", nil},
		{"a `` x ` y", nil},
		{"a `` x ` y `` z", []located{{1, " x ` y "}}},
		{"```\n`x`\n```\n\n# `y`", []located{{5, "y"}}},
		{"```go\nx := `y`\n```", nil},
	} {
		if got := parseMarkdown(tc.text).spans; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: spans %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Install steps":                         "install-steps",
		"`make verify` and [docs](x.md)":        "make-verify-and-docs",
		"v1.38: a line on v1.38.0-beta.0 in CI": "v138-a-line-on-v1380-beta0-in-ci",
		"What **each** patch became (2026)":     "what-each-patch-became-2026",
		"snake_case & more":                     "snake_case--more",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWording(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string // the phrases reported
	}{
		{"st\x6fp the binder before the upgrade", nil},
		{"the workers st\x6fp 2 minutes later", []string{"st\x6fp 2"}}, // cannot tell: rephrase
		{"one se\x73sion on a quiet machine, both arms in one se\x73sion", nil},
		{"se\x73sions of the benchmark", nil},
		{"measured in se\x73sion 6", []string{"se\x73sion 6"}},
		{"Se\x73sion 12 added the flag", []string{"Se\x73sion 12"}},
		{"written in se\x73sion N", []string{"se\x73sion N"}},
		{"a se\x73sion Name", nil},
		{"found at st\x6fp 32", []string{"st\x6fp 32"}},
		{"before st\x6fp N", []string{"st\x6fp N"}},
		{"the CI st\x6fp took 41 min", []string{"CI st\x6fp"}},
		{"CI st\x6fps are slow", []string{"CI st\x6fps"}},
		{"see #23", []string{"#23"}},
		{"(#7, #8)", []string{"#7", "#8"}},
		{"#23 is fixed", []string{"#23"}},
		{"see issue 23", []string{"issue 23"}},
		{"Issue #23 and issues 22", []string{"Issue #23", "issues 22"}},
		{"kubernetes/kubernetes#140691 and kubernetes-sigs/kind#123", nil},
		{"What #140691 changed, #85661", nil},
		{"https://example.com/page#23 and https://example.com/#2", nil},
		{"x#1 and &#123;", nil},
		{`echo "${#arr[@]}" "$#"`, nil},
		{"st\x6fps the workers; a st\x6fp-gap; hunk 2", nil},
		{"issues are tracked upstream", nil},
		{"# 1. What upstream changed", nil},
	} {
		var got []string
		for _, f := range wordingLine("x", 1, tc.line) {
			got = append(got, strings.SplitN(f.msg, `"`, 3)[1])
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: reported %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestWordingByKind(t *testing.T) {
	goSrc := "package x\n\n// Fast since se\x73sion 6.\nvar s = \"se\x73sion 6\" // see #23\n\n/* a\n   b #4 */\nfunc f() {}\n"
	patch := "From 1 Mon\nSubject: [PATCH] x (se\x73sion 6)\n\n---\n x.go | 1 +\n\ndiff --git a/x.go b/x.go\n" +
		"--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n // upstream #12\n-// gone #13\n+// ours #14\n"
	for _, tc := range []struct {
		name, file, text string
		want             []string
	}{
		{"markdown", "docs/x.md", "a\nse\x73sion 6\n", []string{"docs/x.md:2:"}},
		{"results", "docs/results/x/README.md", "se\x73sion 6", nil},
		{"shell", "hack/x.sh", "#!/bin/sh\n# see #23\n", []string{"hack/x.sh:2:"}},
		{"ci", ".ci/run", "# CI st\x6fp\n", []string{".ci/run:1:"}},
		{"go comments only", "pkg/x/x.go", goSrc, []string{"pkg/x/x.go:3:", "pkg/x/x.go:4:", "pkg/x/x.go:7:"}},
		{"generated go", "pkg/x/zz.go", "// Code generated by x. DO NOT EDIT.\n\n" + goSrc, nil},
		{"patch: message and added lines", "patches/0001-x.patch", patch, []string{"patches/0001-x.patch:2:", "patches/0001-x.patch:13:"}},
		{"line patch", "releases/v1.38/patches/0001-x.patch", patch, []string{":2:", ":13:"}},
		{"other files", "hack/cmd/krew/testdata/SHA256SUMS", "se\x73sion 6", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(checkWording(tc.file, tc.text, kindOf(tc.file)))
			if len(got) != len(tc.want) {
				t.Fatalf("findings %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("finding %q, want %q in it", got[i], w)
				}
			}
		})
	}
}

// TestRun checks a git repository end to end: tracked files are checked, against the files git
// knows of (an untracked one counts, an ignored one does not).
func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(p, text string) {
		t.Helper()
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write(".gitignore", "_output/\nignored.md\n")
	write("README.md", "[a](docs/a.md) [n](new.md) [i](ignored.md) `hack/x.sh` `hack/y.sh`\n")
	write("docs/a.md", "# A\n\nCI st\x6fp\n")
	write("docs/results/r.md", "se\x73sion 6 [x](gone.md)\n")
	write("hack/x.sh", "# see #23\n")
	write("hack/x.go", "package x\n\nvar _ = \"se\x73sion 6\"\n")
	git("init", "-q")
	git("add", ".")
	write("new.md", "se\x73sion 6\n") // untracked: a link target, not checked itself
	write("ignored.md", "")
	got, err := run(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`README.md:1: link "ignored.md": ignored.md does not exist`,
		"README.md:1: path `hack/y.sh`: no such file or directory in the repository",
		"docs/a.md:3: \"CI st\x6fp\" names a stop of the CI runs" + wordingHint,
		`docs/results/r.md:1: link "gone.md": docs/results/gone.md does not exist`,
		`hack/x.sh:1: "#23" names an issue of the tracker` + wordingHint,
	}
	if !reflect.DeepEqual(messages(got), want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(messages(got), "\n"), strings.Join(want, "\n"))
	}
}
