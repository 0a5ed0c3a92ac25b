// docscheck checks the repository's texts; make verify runs it (hack/verify/verify-docs.sh).
//
// Every tracked Markdown file is checked for:
//
//   - links: a relative link [text](path) or [text](path#anchor), or a reference definition
//     [label]: path, names a file or directory of the repository, relative to the Markdown file (a
//     leading / is the repository's root). An anchor into a Markdown file, or to a heading of the
//     same file, names one of its headings (the ids GitHub gives them). Links with a scheme
//     (https:, mailto:) are not followed; links in code are not links.
//   - paths: a path written in an inline code span whose first segment is a top-level entry of
//     the repository (`hack/...`, `docs/...`, `.ci/run`, `Makefile`) exists; a :LINE or #anchor
//     after it is dropped first, and so is a Go package pattern's /.... Not checked, by rule rather
//     than by file: patterns and placeholders (a token with *, ?, {, [, <, $ or ..., a segment of
//     capital N's such as NNNN, X.Y), the build's output (_output/, bin/), paths whose first
//     segment is not one of ours (upstream's files written with a prefix such as K/, import paths
//     such as k8s.io/..., absolute paths), and below cmd/, pkg/ and test/, which upstream's tree
//     has too, a path whose second segment is not ours (cmd/kubelet, pkg/scheduler/...).
//
// The project's texts say what the project is and does; how it was made lives in git. Read for
// that: Markdown outside docs/results/, the comments of Go files that are not generated (no
// "Code generated ... DO NOT EDIT." line), shell scripts, YAML, the Makefile, the Dockerfile,
// .ci/run, patches/series, a release line's drop, PREVIEW and UNSERVED, and a patch's commit
// message and added lines (its context and removed lines are upstream's). Reported: the word
// session or stop followed by a number or N, the words CI and stop together, and an issue of this
// project's tracker: a number after the word issue, or # and one to four digits where # follows
// no letter, digit, _, /, &, #, ., @, $, { or - (not a URL's fragment, not owner/repo#N, not
// x#1). Upstream's pull requests are written owner/repo#N, or bare with their five or more digits.
//
// Files are those git tracks; a link or path may name any file git knows of (tracked, or
// untracked and not ignored). Output: file:line: message, one line a finding; exit status 1 when
// there is any.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", "", "repository root (default: git rev-parse --show-toplevel)")
	flag.Parse()
	if *root == "" {
		out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "docscheck: not in a git work tree:", err)
			os.Exit(2)
		}
		*root = strings.TrimSpace(string(out))
	}
	findings, err := run(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docscheck:", err)
		os.Exit(2)
	}
	for _, f := range findings {
		fmt.Println(f)
	}
	if len(findings) > 0 {
		fmt.Fprintf(os.Stderr, "docscheck: %d findings\n", len(findings))
		os.Exit(1)
	}
}

// run checks the repository at root: its tracked files, against the files git knows of (tracked,
// or untracked and not ignored) that exist on disk.
func run(root string) ([]finding, error) {
	known, err := gitFiles(root, "-co", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	tracked, err := gitFiles(root)
	if err != nil {
		return nil, err
	}
	read := func(p string) (string, error) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		return string(b), err
	}
	r := newRepo(known, read)
	var findings []finding
	for _, p := range tracked {
		if !r.files[p] {
			continue // deleted in the work tree
		}
		isMD := strings.HasSuffix(p, ".md")
		kind := kindOf(p)
		if !isMD && kind == skipWording {
			continue
		}
		text, err := read(p)
		if err != nil {
			return nil, err
		}
		if isMD {
			findings = append(findings, checkMarkdown(r, p, text)...)
		}
		findings = append(findings, checkWording(p, text, kind)...)
	}
	sort.SliceStable(findings, func(i, j int) bool {
		if findings[i].file != findings[j].file {
			return findings[i].file < findings[j].file
		}
		return findings[i].line < findings[j].line
	})
	return findings, nil
}

// gitFiles lists files of the work tree at root (git ls-files ARGS), keeping those on disk.
func gitFiles(root string, args ...string) ([]string, error) {
	cmd := exec.Command("git", append([]string{"ls-files", "-z"}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files %s: %w", strings.Join(args, " "), err)
	}
	var files []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) == 0 {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(root, string(p))); err != nil || fi.IsDir() {
			continue
		}
		files = append(files, string(p))
	}
	return files, nil
}

type finding struct {
	file string
	line int
	msg  string
}

func (f finding) String() string { return fmt.Sprintf("%s:%d: %s", f.file, f.line, f.msg) }

// repo is what the checks know of the repository: its files and directories (slash-separated,
// relative to the root), its top-level entries, and the heading ids of its Markdown files.
type repo struct {
	files, dirs, top map[string]bool
	read             func(string) (string, error)
	anchors          map[string]map[string]bool
}

func newRepo(files []string, read func(string) (string, error)) *repo {
	r := &repo{files: map[string]bool{}, dirs: map[string]bool{".": true}, top: map[string]bool{},
		read: read, anchors: map[string]map[string]bool{}}
	for _, f := range files {
		r.files[f] = true
		r.top[strings.SplitN(f, "/", 2)[0]] = true
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			r.dirs[d] = true
		}
	}
	return r
}

func (r *repo) exists(p string) bool { return r.files[p] || r.dirs[p] }

// headingIDs returns the ids of the headings of the Markdown file p (nil when it cannot be read).
func (r *repo) headingIDs(p string) map[string]bool {
	if ids, ok := r.anchors[p]; ok {
		return ids
	}
	var ids map[string]bool
	if text, err := r.read(p); err == nil {
		ids = parseMarkdown(text).ids
	}
	r.anchors[p] = ids
	return ids
}
