package main

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// markdown is what the checks read from a Markdown file: its inline code spans, its link targets
// (outside code) and the ids GitHub gives its headings. Fenced code blocks are skipped.
type markdown struct {
	spans []located
	links []located
	ids   map[string]bool
}

// located is a text and the 1-based line it starts on.
type located struct {
	line int
	text string
}

var (
	fenceRE   = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	headingRE = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	// The target of an inline link or image: ](target) or ](<target>), with an optional "title".
	linkRE = regexp.MustCompile(`\]\(\s*(<[^>\n]*>|[^\s()<>]*)(?:\s+"[^"\n]*")?\s*\)`)
	// A link reference definition: [label]: target
	refDefRE = regexp.MustCompile(`(?m)^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)`)
)

func parseMarkdown(text string) *markdown {
	md := &markdown{ids: map[string]bool{}}
	slugs := map[string]int{}
	lines := strings.Split(text, "\n")
	var para []string
	paraStart := 0
	flush := func() {
		if len(para) > 0 {
			md.paragraph(strings.Join(para, "\n"), paraStart)
		}
		para = nil
	}
	fence := ""
	for i, line := range lines {
		if fence != "" {
			if m := fenceRE.FindStringSubmatch(line); m != nil && m[1][0] == fence[0] &&
				len(m[1]) >= len(fence) && strings.TrimSpace(line[len(m[0]):]) == "" {
				fence = ""
			}
			continue
		}
		if m := fenceRE.FindStringSubmatch(line); m != nil && !(m[1][0] == '`' && strings.Contains(line[len(m[0]):], "`")) {
			flush()
			fence = m[1]
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			flush()
			id := slug(m[1])
			if n := slugs[id]; n > 0 {
				slugs[id] = n + 1
				id = id + "-" + strconv.Itoa(n)
			} else {
				slugs[id] = 1
			}
			md.ids[id] = true
			md.paragraph(line, i+1)
			continue
		}
		if len(para) == 0 {
			paraStart = i + 1
		}
		para = append(para, line)
	}
	flush()
	return md
}

// paragraph reads the code spans and link targets of a paragraph that starts on line first.
// Code spans follow CommonMark: a run of N backticks opens a span that the next run of exactly N
// closes; a run that nothing closes is literal text.
func (md *markdown) paragraph(p string, first int) {
	lineAt := func(off int) int { return first + strings.Count(p[:off], "\n") }
	masked := []byte(p)
	for i := 0; i < len(p); {
		switch p[i] {
		case '\\':
			i += 2
			continue
		case '`':
		default:
			i++
			continue
		}
		n := backticks(p, i)
		end := -1
		for j := i + n; j < len(p); {
			if p[j] != '`' {
				j++
				continue
			}
			if m := backticks(p, j); m == n {
				end = j
				break
			} else {
				j += m
			}
		}
		if end < 0 {
			i += n
			continue
		}
		md.spans = append(md.spans, located{lineAt(i), strings.ReplaceAll(p[i+n:end], "\n", " ")})
		for k := i; k < end+n; k++ {
			if masked[k] != '\n' {
				masked[k] = 'C'
			}
		}
		i = end + n
	}
	text := string(masked)
	for _, m := range linkRE.FindAllStringSubmatchIndex(text, -1) {
		md.links = append(md.links, located{lineAt(m[2]), strings.Trim(text[m[2]:m[3]], "<>")})
	}
	for _, m := range refDefRE.FindAllStringSubmatchIndex(text, -1) {
		md.links = append(md.links, located{lineAt(m[2]), strings.Trim(text[m[2]:m[3]], "<>")})
	}
}

func backticks(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

var (
	inlineLinkRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTagRE    = regexp.MustCompile(`<[^>]*>`)
)

// slug is the id GitHub gives a heading: its text without markup, lower-cased, without
// punctuation other than - and _, spaces turned into -.
func slug(heading string) string {
	s := inlineLinkRE.ReplaceAllString(heading, "$1")
	s = htmlTagRE.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "`", "")
	s = strings.ReplaceAll(s, "*", "")
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c == ' ':
			b.WriteByte('-')
		case c == '-' || c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.Is(unicode.Mn, c):
			b.WriteRune(c)
		}
	}
	return b.String()
}
