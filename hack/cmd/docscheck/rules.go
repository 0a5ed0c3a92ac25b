package main

import (
	"fmt"
	"go/scanner"
	"go/token"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// checkMarkdown checks the links and the code-span paths of the Markdown file (see the package
// comment).
func checkMarkdown(r *repo, file, text string) []finding {
	md := parseMarkdown(text)
	var out []finding
	for _, l := range md.links {
		if msg := r.checkLink(file, l.text, md); msg != "" {
			out = append(out, finding{file, l.line, msg})
		}
	}
	for _, s := range md.spans {
		for _, tok := range strings.Fields(s.text) {
			if p, ok := r.repoPath(tok); ok && !r.exists(p) {
				out = append(out, finding{file, s.line, fmt.Sprintf("path `%s`: no such file or directory in the repository", tok)})
			}
		}
	}
	return out
}

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// checkLink returns what is wrong with the link target of the Markdown file (self is its content),
// or "".
func (r *repo) checkLink(file, target string, self *markdown) string {
	if target == "" || schemeRE.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	p, anchor, _ := strings.Cut(target, "#")
	p, _, _ = strings.Cut(p, "?")
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	ids := self.ids
	if p != "" {
		var full string
		if strings.HasPrefix(p, "/") {
			full = path.Clean("." + p)
		} else {
			full = path.Join(path.Dir(file), p)
		}
		if full == ".." || strings.HasPrefix(full, "../") {
			return fmt.Sprintf("link %q leaves the repository", target)
		}
		if !r.exists(full) {
			return fmt.Sprintf("link %q: %s does not exist", target, full)
		}
		if anchor == "" || !strings.HasSuffix(full, ".md") || !r.files[full] {
			return ""
		}
		ids = r.headingIDs(full)
	}
	if anchor == "" || ids == nil {
		return ""
	}
	if a, err := url.PathUnescape(anchor); err == nil {
		anchor = a
	}
	if !ids[strings.ToLower(anchor)] {
		where := "this file"
		if p != "" {
			where = path.Join(path.Dir(file), p)
		}
		return fmt.Sprintf("link %q: no heading with id %q in %s", target, anchor, where)
	}
	return ""
}

var (
	// A line or range after a path: hack/lib.sh:42, pv_controller.go:1084-1105.
	lineSuffixRE = regexp.MustCompile(`:\d+(-\d+)?(:\d+)?$`)
	// A placeholder segment: NNNN, vX.Y, X.Y.Z.
	placeholderRE = regexp.MustCompile(`(^|[/._-])v?(N+|X\.Y(\.Z)?)([/._-]|$)`)
)

// repoPath returns the repository path a code-span token names, and false when the token is not
// one to check (see the package comment for what is allowed).
func (r *repo) repoPath(tok string) (string, bool) {
	t := strings.TrimLeft(tok, `"'(`)
	t = strings.TrimRight(t, `"'),;:`)
	if i := strings.LastIndex(t, "="); i >= 0 {
		t = t[i+1:]
	}
	if strings.ContainsAny(t, "*?{}[]<>$") || strings.Contains(t, "://") {
		return "", false
	}
	if i := strings.Index(t, "#"); i >= 0 {
		t = t[:i]
	}
	t = lineSuffixRE.ReplaceAllString(t, "")
	t = strings.TrimSuffix(t, "...")
	t = strings.TrimRight(t, ".")
	t = strings.TrimPrefix(t, "./")
	if t == "" || strings.Contains(t, "...") || placeholderRE.MatchString(t) {
		return "", false
	}
	t = path.Clean(t)
	first, rest, _ := strings.Cut(t, "/")
	if first == "_output" || first == "bin" || !r.top[first] {
		return "", false
	}
	// Upstream's tree has cmd/, pkg/ and test/ too: below them, a second segment that is not ours
	// starts a path of upstream's (cmd/kubelet, pkg/scheduler/util/assumecache).
	if upstreamLayout[first] && rest != "" {
		second, _, _ := strings.Cut(rest, "/")
		if !r.exists(first + "/" + second) {
			return "", false
		}
	}
	return t, true
}

// The top-level directories that Kubernetes repositories have too.
var upstreamLayout = map[string]bool{"cmd": true, "pkg": true, "test": true}

// What part of a file the wording rule reads.
type wordingKind int

const (
	skipWording wordingKind = iota
	allText                 // every line
	goComments              // the comments of a Go file that is not generated
	patchText               // a patch's message and the lines it adds
)

func kindOf(p string) wordingKind {
	base := path.Base(p)
	switch {
	case strings.HasPrefix(p, "docs/results/"):
		return skipWording
	case strings.HasSuffix(p, ".md"), strings.HasSuffix(p, ".sh"), strings.HasSuffix(p, ".yaml"),
		strings.HasSuffix(p, ".yml"), base == "Makefile", base == "Dockerfile", p == ".ci/run",
		p == "patches/series", strings.HasPrefix(p, "releases/") && (base == "drop" || base == "PREVIEW" || base == "UNSERVED"):
		return allText
	case strings.HasSuffix(p, ".go"):
		return goComments
	case strings.HasSuffix(p, ".patch"):
		return patchText
	}
	return skipWording
}

// The wording rule: each expression's first group is the phrase reported.
var wordingRules = []struct {
	re  *regexp.Regexp
	msg string
}{
	{regexp.MustCompile(`\b([Ss]essions?[ -]+(?:\d+|N))\b`), "names a work session"},
	{regexp.MustCompile(`\b([Ss]top[ -]+(?:\d+|N))\b`), "names a stop by its number"},
	{regexp.MustCompile(`\b(CI[ -]stops?)\b`), "names a stop of the CI runs"},
	{regexp.MustCompile(`(?i)\b(issues?[ -]+#?\d+)\b`), "names an issue by its number"},
	// # and one to four digits, where # does not follow a letter, digit or _ (x#1, a URL's
	// page#12), nor / (a URL's /#12), &, #, ., @, $, { or -.
	{regexp.MustCompile(`(?:^|[^\w/&#.@${-])(#\d{1,4})\b`), "names an issue of the tracker"},
}

const wordingHint = "; say what the project is or does (history lives in git; upstream: owner/repo#N)"

// wordingLine reports the wording rule's findings in one line of text, each phrase once (an issue
// number written with # after the word issue is one finding, not two).
func wordingLine(file string, line int, s string) []finding {
	var out []finding
	var seen [][2]int
	for _, rule := range wordingRules {
	matches:
		for _, m := range rule.re.FindAllStringSubmatchIndex(s, -1) {
			for _, r := range seen {
				if m[2] < r[1] && r[0] < m[3] {
					continue matches
				}
			}
			seen = append(seen, [2]int{m[2], m[3]})
			out = append(out, finding{file, line, fmt.Sprintf("%q %s%s", s[m[2]:m[3]], rule.msg, wordingHint)})
		}
	}
	return out
}

var generatedRE = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// checkWording applies the wording rule to the part of the file that kind names.
func checkWording(file, text string, kind wordingKind) []finding {
	var out []finding
	lines := func(first int, s string) {
		for i, l := range strings.Split(s, "\n") {
			out = append(out, wordingLine(file, first+i, l)...)
		}
	}
	switch kind {
	case allText:
		lines(1, text)
	case goComments:
		if generatedRE.MatchString(text) {
			return nil
		}
		fset := token.NewFileSet()
		src := []byte(text)
		var s scanner.Scanner
		s.Init(fset.AddFile(file, -1, len(src)), src, nil, scanner.ScanComments)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok == token.COMMENT {
				lines(fset.Position(pos).Line, lit)
			}
		}
	case patchText:
		inDiff := false
		for i, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "diff --git ") {
				inDiff = true
			}
			if !inDiff || strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++ ") {
				out = append(out, wordingLine(file, i+1, l)...)
			}
		}
	}
	return out
}
