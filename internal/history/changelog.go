package history

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Changelog is a changelog file read into sections, one per version
// heading.
type Changelog struct {
	File     string    `json:"file"`
	Sections []Section `json:"sections"`
}

// Section is a version's part of a changelog: its release notes.
type Section struct {
	Heading string  `json:"heading"`
	Version string  `json:"version"` // "" for an "Unreleased" section
	Line    int     `json:"line"`    // of the heading, 1-based
	Entries []Entry `json:"entries"`
}

// Entry is one item of release notes: a bullet (with its continuation
// lines) or a paragraph.
type Entry struct {
	Text string `json:"text"` // as written, lines joined
	// Group is the heading or label the entry is under inside its
	// section ("Added", "Bugfixes", "Changes to existing functions"), ""
	// when none.
	Group string `json:"group,omitempty"`
	Kind  Kind   `json:"kind"` // by the rules (Classify)
	PRs   []int  `json:"prs,omitempty"`
	Line  int    `json:"line"`
}

// Kind is what an entry of release notes is about, as paper 003 sorts
// them.
type Kind string

// Kinds of entries.
const (
	Feature     Kind = "feature"     // new functionality, options, capabilities
	Improvement Kind = "improvement" // an existing feature made better or faster
	Fix         Kind = "fix"         // a bug fixed
	Other       Kind = "other"       // documentation, packaging, deprecations, removals
)

// Kinds lists the kinds in order.
var Kinds = []Kind{Feature, Improvement, Fix, Other}

// changelogNames are changelog file names (lower case, without an
// extension), most likely first. docsOnly are names that mean a changelog
// only inside a documentation folder.
var (
	changelogNames = []string{"changelog", "changes", "history", "news", "release-notes", "release_notes", "releasenotes", "releases", "whatsnew", "whats_new", "whats-new"}
	docsOnly       = []string{"versions", "changelog/index", "release-notes/index"}
	changelogExts  = []string{"", ".md", ".rst", ".txt", ".markdown"}
)

// FindChangelog picks the changelog among a commit's files: CHANGELOG.md,
// CHANGES.rst, HISTORY, NEWS, release-notes… at the top, then in docs/ or
// doc/ (docs/changelog.rst, docs/versions.rst, doc/source/history.rst).
// "" when there is none.
func FindChangelog(files []string) string {
	type cand struct {
		file       string
		dir, name  int
		ext, depth int
	}
	var best *cand
	for _, f := range files {
		dir := path.Dir(f)
		depth := strings.Count(f, "/")
		dirRank := -1
		switch {
		case dir == ".":
			dirRank = 0
		case dir == "docs" || dir == "doc":
			dirRank = 1
		case strings.HasPrefix(dir, "docs/") || strings.HasPrefix(dir, "doc/"):
			dirRank = 2
		}
		if dirRank < 0 || depth > 3 {
			continue
		}
		base := strings.ToLower(path.Base(f))
		ext := path.Ext(base)
		extRank := slices.Index(changelogExts, ext)
		if extRank < 0 {
			ext, extRank = "", 0
		}
		stem := strings.TrimSuffix(base, ext)
		nameRank := slices.Index(changelogNames, stem)
		if nameRank < 0 && dirRank > 0 {
			for i, n := range docsOnly {
				if stem == path.Base(n) && (!strings.Contains(n, "/") || path.Base(dir) == path.Dir(n)) {
					nameRank = len(changelogNames) + i
				}
			}
		}
		if nameRank < 0 {
			continue
		}
		c := cand{file: f, dir: dirRank, name: nameRank, ext: extRank, depth: depth}
		if best == nil || less(c.dir, c.name, c.ext, c.file, best.dir, best.name, best.ext, best.file) {
			best = &c
		}
	}
	if best == nil {
		return ""
	}
	return best.file
}

func less(a1, a2, a3 int, a4 string, b1, b2, b3 int, b4 string) bool {
	if a1 != b1 {
		return a1 < b1
	}
	if a2 != b2 {
		return a2 < b2
	}
	if a3 != b3 {
		return a3 < b3
	}
	return a4 < b4
}

// MaxEntries bounds the entries kept of one section.
const MaxEntries = 500

// maxEntry bounds one entry's text, in bytes.
const maxEntry = 4 << 10

var (
	atxHeading = regexp.MustCompile(`^(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	bullet     = regexp.MustCompile(`^([ \t]*)(?:[-*+•]|\d{1,3}[.)])[ \t]+(.*)$`)
	linkDef    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+\S`)
	dateOnly   = regexp.MustCompile(`(?i)^[\s_*()\[\]-]*(?:released?\s*(?:on)?\s*:?\s*)?(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|[a-z]{3,9}\.?\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+[a-z]{3,9}\.?\s+\d{4}|unreleased|not yet released|tbd|tba)[\s_*()\[\]-]*$`)
	unreleased = regexp.MustCompile(`(?i)\b(unreleased|upcoming|in development|not yet released)\b`)
	rstComment = regexp.MustCompile(`^\.\.(\s|$)`)
)

// adornment reports whether a line is a title's underline or overline
// (or a rule): three or more of one punctuation character, and which.
func adornment(l string) (byte, bool) {
	l = strings.TrimRight(l, " \t")
	if len(l) < 3 || !strings.ContainsRune(`=-~^*+#"'`+"`"+`:._`, rune(l[0])) {
		return 0, false
	}
	for i := 1; i < len(l); i++ {
		if l[i] != l[0] {
			return 0, false
		}
	}
	return l[0], true
}

// heading is a heading line found in a changelog.
type heading struct {
	line  int // 0-based index of the text line
	skip  int // lines the heading takes after its text line (an underline)
	level int
	text  string
}

// ParseChangelog reads a changelog's sections: Markdown (Keep a Changelog,
// towncrier's Markdown), reStructuredText (titles under or between
// adornment lines, towncrier's default), and plain text whose version
// lines stand alone ("New in 0.6.1", "1.2.0 (2024-05-01)"). A heading that
// names a version (or "Unreleased") starts a section, which runs to the
// next heading at its level or above; the headings under it, and bullets
// or paragraphs ending in ":" with items under them, are groups; bullets
// and paragraphs are entries.
func ParseChangelog(file string, data []byte) *Changelog {
	text := Clean(string(data))
	lines := strings.Split(text, "\n")
	heads := findHeadings(lines)
	hasVersion := false
	for _, h := range heads {
		if _, _, ok := ParseVersion(h.text); ok {
			hasVersion = true
			break
		}
	}
	if !hasVersion {
		heads = plainHeadings(lines)
	}
	isHead := map[int]heading{}
	for _, h := range heads {
		isHead[h.line] = h
	}
	cl := &Changelog{File: file}
	for i, h := range heads {
		version, _, ok := ParseVersion(h.text)
		if !ok && !unreleased.MatchString(h.text) {
			continue
		}
		end := len(lines)
		for _, n := range heads[i+1:] {
			if n.level <= h.level {
				end = n.line
				break
			}
		}
		sec := Section{Heading: OneLine(plain(h.text), 200), Version: version, Line: h.line + 1}
		sec.Entries = entries(lines, h.line+1+h.skip, end, isHead)
		cl.Sections = append(cl.Sections, sec)
	}
	return cl
}

// findHeadings finds Markdown ATX headings and underlined (and
// overlined) titles; adornment styles get levels in the order they first
// appear, as reStructuredText does.
func findHeadings(lines []string) []heading {
	var out []heading
	styles := map[string]int{}
	inFence := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(strings.TrimSpace(l), "```") || strings.HasPrefix(strings.TrimSpace(l), "~~~") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := atxHeading.FindStringSubmatch(l); m != nil {
			out = append(out, heading{line: i, level: len(m[1]), text: m[2]})
			continue
		}
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || bullet.MatchString(l) || i+1 >= len(lines) {
			continue
		}
		c, ok := adornment(lines[i+1])
		if _, self := adornment(l); !ok || self {
			continue
		}
		over := i > 0 && strings.TrimSpace(lines[i-1]) == strings.TrimSpace(lines[i+1])
		style := string(c)
		if over {
			style = "over" + style
		}
		lvl, ok := styles[style]
		if !ok {
			lvl = 10 + len(styles) // below any Markdown level: mixed files are rare
			styles[style] = lvl
		}
		out = append(out, heading{line: i, skip: 1, level: lvl, text: strings.TrimSpace(l)})
		i++
	}
	return out
}

// plainHeadings finds version lines standing alone: not indented, not a
// bullet, short, naming a version, with a blank line (or the start) above.
func plainHeadings(lines []string) []heading {
	var out []heading
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || l != strings.TrimLeft(l, " \t") || bullet.MatchString(l) || len(t) > 80 || len(strings.Fields(t)) > 8 {
			continue
		}
		if i > 0 && strings.TrimSpace(lines[i-1]) != "" {
			continue
		}
		if _, _, ok := ParseVersion(t); ok {
			out = append(out, heading{line: i, level: 1, text: t})
		}
	}
	return out
}

// entries reads the entries of a section's body, lines [from, to).
func entries(lines []string, from, to int, heads map[int]heading) []Entry {
	var out []Entry
	group := ""   // the current sub-heading
	var cur *item // the item being read
	type parent struct {
		indent int
		it     *item
	}
	var stack []parent // open bullets, outermost first
	var items []*item
	blank := true // the line before was blank (or the section's start)
	fence := ""   // the fence of the code block being passed, if any
	for i := from; i < to && len(items) < 4*MaxEntries; i++ {
		l := lines[i]
		if t := strings.TrimSpace(l); fence != "" || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			switch {
			case fence == "":
				fence = t[:3]
			case strings.HasPrefix(t, fence):
				fence = ""
			}
			continue // code in release notes is no entry
		}
		if h, ok := heads[i]; ok {
			stack, cur, blank = nil, nil, true
			group = OneLine(plain(h.text), 200)
			i += h.skip
			continue
		}
		t := strings.TrimSpace(l)
		if t == "" {
			blank = true
			continue
		}
		if _, ok := adornment(t); ok {
			continue // an overline or a rule
		}
		if linkDef.MatchString(l) || rstComment.MatchString(t) {
			cur, blank = nil, false
			continue
		}
		if m := bullet.FindStringSubmatch(l); m != nil {
			indent := width(m[1])
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
				stack = stack[:len(stack)-1]
			}
			it := &item{text: m[2], line: i + 1, group: group}
			if len(stack) > 0 {
				p := stack[len(stack)-1].it
				it.parent = p
				p.children++
			}
			items = append(items, it)
			stack = append(stack, parent{indent: indent, it: it})
			cur, blank = it, false
			continue
		}
		indent := width(l[:len(l)-len(strings.TrimLeft(l, " \t"))])
		switch {
		case indent > 0 && len(stack) > 0:
			top := stack[len(stack)-1].it // an indented line: the open bullet's
			top.text += " " + t
		case cur != nil && !blank:
			cur.text += " " + t // a lazy continuation, or a paragraph's next line
		default:
			stack = nil // a paragraph at the section's level
			it := &item{text: t, line: i + 1, group: group, para: true}
			items = append(items, it)
			cur = it
		}
		blank = false
	}
	// Labels: an item ending in ":" with items under it (a bullet's
	// children, or the items after a paragraph, up to the next such
	// paragraph) names their group.
	for i, it := range items {
		colon := strings.HasSuffix(strings.TrimSpace(it.text), ":")
		// A short bullet with items under it names them too ("Updates").
		short := it.children > 0 && len(strings.Fields(it.text)) <= 5 && !strings.HasSuffix(strings.TrimSpace(it.text), ".")
		if !colon && !short {
			continue
		}
		label := OneLine(plain(strings.TrimSuffix(strings.TrimSpace(it.text), ":")), 200)
		switch {
		case it.children > 0:
			it.label = true
			for _, c := range items[i+1:] {
				if c.under(it) {
					c.group = label
				}
			}
		case colon && it.para && it.parent == nil:
			for _, c := range items[i+1:] {
				if c.group != it.group || c.para && strings.HasSuffix(strings.TrimSpace(c.text), ":") {
					break
				}
				it.label = true
				c.group = label
			}
		}
	}
	for _, it := range items {
		if it.label {
			continue
		}
		if it.parent != nil && !it.parent.label {
			// A sub-item of an entry is part of it.
			root := it.parent
			for root.parent != nil && !root.parent.label {
				root = root.parent
			}
			root.text += "; " + it.text
			continue
		}
		txt := strings.TrimSpace(it.text)
		if it.para && (dateOnly.MatchString(plain(txt)) || len(plain(txt)) == 0) {
			continue
		}
		out = append(out, Entry{Text: txt, Group: it.group, Line: it.line})
	}
	for i := range out {
		out[i].Text = Bound(out[i].Text, maxEntry)
		out[i].PRs = References(out[i].Text)
		out[i].Kind = Classify(out[i].Group, out[i].Text)
	}
	if len(out) > MaxEntries {
		out = out[:MaxEntries]
	}
	return out
}

// item is an entry being read.
type item struct {
	text     string
	line     int
	group    string
	para     bool
	parent   *item
	children int
	label    bool
}

func (it *item) under(p *item) bool {
	for x := it.parent; x != nil; x = x.parent {
		if x == p {
			return true
		}
	}
	return false
}

func width(indent string) int {
	return len(strings.ReplaceAll(indent, "\t", "    "))
}

// References finds the pull request (or issue) numbers an entry names:
// "#123", "PR 456", "pull #789", "GH-12", ".../pull/34" and ".../issues/56"
// links, Sphinx's :pr:`78` and :issue:`90`. Which of them are pull
// requests, the history says.
func References(text string) []int {
	var out []int
	for _, m := range refPattern.FindAllStringSubmatch(text, -1) {
		for _, g := range m[1:] {
			if g == "" {
				continue
			}
			n, err := strconv.Atoi(g)
			if err == nil && n > 0 && n <= maxNumber && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

var refPattern = regexp.MustCompile(`(?i)(?:(?:^|[^\w&/#])#(\d{1,9})\b|\bPR\s*#?\s*(\d{1,9})\b|\bpull(?:\s+request)?\s*#?\s*(\d{1,9})\b|\bGH-(\d{1,9})\b|/(?:pull|pulls|issues)/(\d{1,9})\b|:(?:pr|pull|issue|gh):` + "`" + `#?(\d{1,9})` + "`" + `)`)

// Plain is an entry's text without its markup: reStructuredText roles
// and literals, Markdown links, emphasis and code spans, links and pull
// request references taken out.
func Plain(text string) string { return plain(text) }

var (
	rstRole          = regexp.MustCompile(":[a-zA-Z:]+:`~?([^`<]*?)(?:\\s*<[^>]*>)?`")
	rstLiteral       = regexp.MustCompile("``([^`]+)``")
	rstLink          = regexp.MustCompile("`([^`<]+?)\\s*<[^>]+>`_+")
	mdLinkFull       = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdLinkRef        = regexp.MustCompile(`\[([^\]]*)\]\[[^\]]*\]`)
	codeSpan         = regexp.MustCompile("`([^`]+)`")
	emphasis         = regexp.MustCompile(`(\*\*|\*)([^*]+?)(\*\*|\*)`)
	underlined       = regexp.MustCompile(`^_(.*)_$`) // a whole line in italics; a name's underscores stay
	bareURL          = regexp.MustCompile(`<?https?://[^\s>)\]]+>?`)
	refInParens      = regexp.MustCompile(`(?i)\(\s*(?:(?:PR|pull|GH-|issue)?\s*#?\d{1,9}\s*,?\s*)+\)`)
	spaceRun         = regexp.MustCompile(`\s+`)
	spaceBeforePunct = regexp.MustCompile(`\s+([.,;:!?])`)
)

func plain(s string) string {
	s = rstRole.ReplaceAllString(s, "$1")
	s = rstLink.ReplaceAllString(s, "$1")
	s = rstLiteral.ReplaceAllString(s, "$1")
	s = mdLinkFull.ReplaceAllString(s, "$1")
	s = mdLinkRef.ReplaceAllString(s, "$1")
	s = codeSpan.ReplaceAllString(s, "$1")
	s = emphasis.ReplaceAllString(s, "$2")
	s = underlined.ReplaceAllString(strings.TrimSpace(s), "$1")
	s = bareURL.ReplaceAllString(s, "")
	s = refInParens.ReplaceAllString(s, "")
	s = spaceRun.ReplaceAllString(s, " ")
	s = spaceBeforePunct.ReplaceAllString(s, "$1")
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "_*"))
}

// For is the section of a version ("v1.2.0", "1.2"), or nil.
func (c *Changelog) For(version string) *Section {
	if c == nil {
		return nil
	}
	for i := range c.Sections {
		if s := &c.Sections[i]; s.Version != "" && SameVersion(s.Version, version) {
			return s
		}
	}
	return nil
}

// groupKinds decide an entry's kind by the heading or label it is under,
// when that is clear; the words are matched at the start of the label.
var groupKinds = []struct {
	kind  Kind
	words []string
}{
	{Fix, []string{"fix", "fixed", "fixes", "bug", "bugs", "bugfix", "bugfixes", "bug fixes", "bug fix"}},
	{Feature, []string{"added", "add", "feature", "features", "new feature", "new features", "new", "new functions", "new function", "new api", "additions"}},
	{Improvement, []string{"improvement", "improvements", "improved", "enhancement", "enhancements", "performance", "optimization", "optimizations", "speedups"}},
	{Other, []string{"deprecated", "deprecations", "removed", "removals", "breaking", "potentially breaking", "backwards incompatible", "security",
		"documentation", "docs", "improved documentation", "misc", "miscellaneous", "internal", "internals", "trivial", "packaging", "build",
		"dependencies", "contributors", "new authors", "authors", "thanks", "testing", "tests", "ci", "chore", "chores", "maintenance"}},
}

// Entry keywords, checked in order (fixes first: "fix a crash when adding"
// is a fix), at the start of the entry or after a subject ("foo now
// supports").
var kindWords = []struct {
	kind Kind
	re   *regexp.Regexp
}{
	{Other, regexp.MustCompile(`(?i)^(?:docs?\b|documentation|deprecat|remove[ds]?\b|drop(?:ped|s)?\b|bump|update (?:ci|the ci|dependencies|copyright)|typo|test(?:s|ing)?\b|ci\b|require python|python \d\.\d+ (?:support|is)|add(?:ed)? (?:python|support for python) \d|(?:added )?python \d\.\d+ support|(?:minor )?(?:code|documentation) improvements)`)},
	{Fix, regexp.MustCompile(`(?i)(?:^fix(?:e[ds])?\b|^bug\b|^correct(?:ed|s)?\b|^resolve[ds]?\b|^prevent(?:ed|s)?\b|^avoid(?:ed|s)?\b|\bwas fixed\b|\bno longer (?:crash|raise|fail|hang|break)|\bcrash|\bregression\b)`)},
	{Feature, regexp.MustCompile(`(?i)(?:^(?:add(?:ed|s)?|new|introduce[ds]?|implement(?:ed|s)?|support(?:ed|s)?|allow(?:ed|s)?|enable[ds]?|extend(?:ed|s)?|expose[ds]?|provide[ds]?|accept(?:ed|s)?)\b|\bnow (?:accepts?|supports?|allows?|takes?|handles?|returns?|has|can|works?|implements?)\b|\bnew (?:option|parameter|argument|keyword|flag|method|function|class)\b|\badded? (?:an? )?(?:option|parameter|argument|keyword|flag|support)\b|\b(?:accepts?|supports?)\b|\bkeyword argument\b|\bfunction$|\b(?:takes|gains|gets) (?:an?|new)\b)`)},
	{Improvement, regexp.MustCompile(`(?i)(?:^(?:improve[ds]?|speed(?:s|ed)? up|sped up|optimi[sz]e[ds]?|faster|performance|refactor(?:ed|s)?|simplif(?:y|ied|ies)|clean(?:ed)? up|update[ds]?|change[ds]?|rename[ds]?|make|made|use[ds]?)\b|\bwas (?:optimi[sz]ed|improved|updated|changed)\b|\bis now faster\b)`)},
}

// Classify sorts an entry by rules: the group it is under when that says
// (Added, Features, New → feature; Fixed, Bugfixes → fix; Improved,
// Enhancements → improvement; Deprecated, Removed, Documentation → other),
// else its words; an entry the rules cannot place is an improvement when
// it is under an unclear group ("Changed"), else other.
func Classify(group, text string) Kind {
	g := strings.ToLower(strings.TrimSpace(plain(group)))
	best, kind := "", Kind("")
	for _, gk := range groupKinds {
		for _, w := range gk.words {
			if (g == w || strings.HasPrefix(g, w+" ") || strings.HasPrefix(g, w+":")) && len(w) > len(best) {
				best, kind = w, gk.kind // the longest: "improved documentation" is not "improved"
			}
		}
	}
	if kind != "" {
		return kind
	}
	t := plain(text)
	for _, kw := range kindWords {
		if kw.re.MatchString(t) {
			return kw.kind
		}
	}
	if g != "" {
		return Improvement
	}
	return Other
}
