package history

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Notes are a release's notes: its entries, where they were read, and
// the pull requests each entry is linked to.
type Notes struct {
	// Source is where the notes come from: NotesChangelog (the
	// changelog's section for the tag), NotesTag (the annotated tag's
	// message) or NotesGenerated (one entry per pull request the release
	// brought, by its title, as GitHub's generated release notes list
	// them).
	Source  string  `json:"source"`
	File    string  `json:"file,omitempty"` // the changelog, for NotesChangelog
	Heading string  `json:"heading,omitempty"`
	Entries []Entry `json:"entries"`
	// Links are the entries' pull requests: for each entry (by index),
	// the numbers and how each was found.
	Links [][]Link `json:"links"`
}

// Where notes come from.
const (
	NotesChangelog = "changelog"
	NotesTag       = "tag message"
	NotesGenerated = "pull request titles"
)

// Link is a pull request an entry is about, and how that was told.
type Link struct {
	Number int    `json:"number"`
	How    string `json:"how"` // LinkNamed, LinkIssue, LinkMatched, LinkTitle
}

// How links are found.
const (
	LinkNamed   = "named"   // the entry names the pull request's number
	LinkIssue   = "issue"   // the entry names an issue the pull request's title or description names
	LinkMatched = "matched" // an identifier the entry names is in the pull request's title or changed code
	LinkTitle   = "title"   // the entry is the pull request's title (generated notes)
)

// NotesFor assembles a release's notes: the changelog's section for its
// version when there is one, else its annotated tag's message when that
// says more than the version, else the titles of the pull requests it
// brought (prs: the release's, by number order). reason says, when the
// notes are not the changelog's, why ("the changelog has no section for
// 1.2.0").
func NotesFor(rel Release, cl *Changelog, prs []PullRequest) (n Notes, reason string) {
	if sec := cl.For(rel.Version); sec != nil && len(sec.Entries) > 0 {
		n = Notes{Source: NotesChangelog, File: cl.File, Heading: sec.Heading, Entries: sec.Entries}
	} else {
		switch {
		case cl == nil:
			reason = "no changelog"
		case sec == nil:
			reason = fmt.Sprintf("the changelog %s has no section for %s", cl.File, rel.Version)
		default:
			reason = fmt.Sprintf("the changelog %s's section for %s has no entries", cl.File, rel.Version)
		}
		if msg := strings.TrimSpace(rel.Message); !trivialTagMessage(msg, rel) {
			n = Notes{Source: NotesTag, Heading: rel.Tag, Entries: tagEntries(msg)}
		} else {
			n = Notes{Source: NotesGenerated, Heading: rel.Tag}
			for _, pr := range prs {
				n.Entries = append(n.Entries, Entry{Text: pr.Title, Kind: Classify("", pr.Title), PRs: []int{pr.Number}})
			}
		}
	}
	n.Links = make([][]Link, len(n.Entries))
	for i, e := range n.Entries {
		if n.Source == NotesGenerated {
			n.Links[i] = []Link{{Number: e.PRs[0], How: LinkTitle}}
			continue
		}
		n.Links[i] = link(e, prs)
	}
	return n, reason
}

// trivialTagMessage reports whether a tag's message says nothing but the
// release ("0.7.0 Release", "Release 7.0.1", "v1.2").
func trivialTagMessage(msg string, rel Release) bool {
	rest := strings.ToLower(msg)
	for _, w := range []string{rel.Tag, rel.Version} {
		rest = strings.ReplaceAll(rest, strings.ToLower(w), " ")
	}
	words := 0
	for _, w := range strings.FieldsFunc(rest, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') }) {
		switch w {
		case "release", "released", "version", "tag", "tagged", "bump", "v":
		default:
			words++
		}
	}
	return words < 2
}

// tagEntries reads a tag message as entries: its bullets and paragraphs,
// a one-line summary split at its commas ("once decorator, multi-predicate
// partition, fixes").
func tagEntries(msg string) []Entry {
	lines := strings.Split(msg, "\n")
	es := entries(lines, 0, len(lines), nil)
	if len(es) == 1 && !strings.Contains(es[0].Text, ". ") && strings.Count(es[0].Text, ",") >= 1 {
		var out []Entry
		for _, part := range strings.Split(es[0].Text, ",") {
			if t := strings.TrimSpace(part); t != "" {
				out = append(out, Entry{Text: t, Kind: Classify("", t), PRs: References(t), Line: es[0].Line})
			}
		}
		return out
	}
	return es
}

// link finds the pull requests of the release an entry is about: those
// it names by number; those whose title or description names an issue
// it names; failing both, those whose title or changed code holds an
// identifier the entry names (a `code span`, a :role:`target`, a dotted
// or underscored name), title matches first. A pull request whose own
// title the rules call a fix is not matched to an entry by identifiers
// alone.
func link(e Entry, prs []PullRequest) []Link {
	var out []Link
	byNum := map[int]PullRequest{}
	for _, pr := range prs {
		byNum[pr.Number] = pr
	}
	for _, n := range e.PRs {
		if _, ok := byNum[n]; ok {
			out = append(out, Link{Number: n, How: LinkNamed})
			continue
		}
		// An issue number: the pull requests that say they close it.
		re := regexp.MustCompile(`(?:^|[^\w&/])#` + strconv.Itoa(n) + `\b|/issues/` + strconv.Itoa(n) + `\b`)
		for _, pr := range prs {
			if re.MatchString(pr.Title) || re.MatchString(pr.Body) {
				out = append(out, Link{Number: pr.Number, How: LinkIssue})
			}
		}
	}
	if len(out) > 0 || len(e.PRs) > 0 {
		return dedupe(out)
	}
	ids := Identifiers(e.Text)
	if len(ids) == 0 {
		return nil
	}
	var title, code []Link
	for _, pr := range prs {
		if Classify("", pr.Title) == Fix && e.Kind != Fix {
			continue
		}
		switch {
		case mentions(pr.Title, ids):
			title = append(title, Link{Number: pr.Number, How: LinkMatched})
		case pr.changed != "" && mentions(pr.changed, ids):
			code = append(code, Link{Number: pr.Number, How: LinkMatched})
		}
	}
	if len(title) > 0 {
		return title
	}
	return code
}

func dedupe(ls []Link) []Link {
	var out []Link
	for _, l := range ls {
		if !slices.ContainsFunc(out, func(o Link) bool { return o.Number == l.Number }) {
			out = append(out, l)
		}
	}
	return out
}

var (
	roleTarget  = regexp.MustCompile(":(?:py:)?(?:func|meth|class|mod|attr|obj|data|exc|func|function|method):`~?(?:[^`<]*<)?([A-Za-z_][\\w.]*)(?:\\(\\))?>?`")
	singleSpan  = regexp.MustCompile("(?:^|[^`:])`([A-Za-z_][\\w.]*)(?:\\(\\))?`(?:[^`_]|$)")
	literalSpan = regexp.MustCompile("``([A-Za-z_][\\w.]*)(?:\\(\\))?``")
	dottedName  = regexp.MustCompile(`\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b`)
	underName   = regexp.MustCompile(`\b[A-Za-z]\w*_\w+\b`)
	camelName   = regexp.MustCompile(`\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b`)
)

// commonIdents are names too common to tell one pull request from
// another.
var commonIdents = map[string]bool{"self": true, "none": true, "true": true, "false": true, "init": true, "__init__": true,
	"python": true, "pytest": true, "setup": true, "test": true, "tests": true, "str": true, "int": true, "list": true,
	"dict": true, "set": true, "tuple": true, "bytes": true, "type": true, "object": true, "value": true, "key": true,
	"keys": true, "values": true, "items": true, "copy": true, "len": true, "iter": true, "next": true, "e.g": true, "i.e": true}

// Identifiers are the code names an entry is about, each dotted name also
// by its last part ("strutils.ellipsize" gives "ellipsize"): the
// functions, classes and modules it refers to (a Sphinx role's target, a
// code span holding a name) when it refers to any; else the names it
// mentions otherwise (a literal such as a parameter's, a dotted,
// underscored or CamelCase word). An entry about one function that names
// its new parameter is about that function, not about every change that
// mentions a parameter of that name.
func Identifiers(text string) []string {
	collect := func(names []string) []string {
		var out []string
		for _, n := range names {
			if strings.Contains(n, "://") {
				continue
			}
			for _, x := range []string{n, n[strings.LastIndexByte(n, '.')+1:]} {
				x = strings.Trim(x, ".")
				if len(x) >= 3 && !commonIdents[strings.ToLower(x)] && !slices.Contains(out, x) {
					out = append(out, x)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	var primary []string
	for _, m := range roleTarget.FindAllStringSubmatch(text, -1) {
		primary = append(primary, m[1])
	}
	for _, m := range singleSpan.FindAllStringSubmatch(text, -1) {
		primary = append(primary, m[1])
	}
	if ids := collect(primary); len(ids) > 0 {
		return ids
	}
	var names []string
	for _, m := range literalSpan.FindAllStringSubmatch(text, -1) {
		names = append(names, m[1])
	}
	names = append(names, dottedName.FindAllString(text, -1)...)
	names = append(names, underName.FindAllString(text, -1)...)
	names = append(names, camelName.FindAllString(text, -1)...)
	return collect(names)
}

func mentions(text string, ids []string) bool {
	for _, id := range ids {
		if i := strings.Index(text, id); i >= 0 {
			before := i == 0 || !isWord(text[i-1])
			after := i+len(id) == len(text) || !isWord(text[i+len(id)])
			if before && after {
				return true
			}
			// a later occurrence may stand alone
			if strings.Contains(text[i+1:], id) && mentions(text[i+1:], []string{id}) {
				return true
			}
		}
	}
	return false
}

func isWord(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// WithChanged gives a pull request the text identifiers are matched
// against in its code: the code patch's changed lines and hunk headers
// (the function each hunk is in).
func (pr PullRequest) WithChanged(codePatch string) PullRequest {
	var b strings.Builder
	for _, l := range strings.Split(codePatch, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "@@"):
			if i := strings.LastIndex(l, "@@"); i > 2 {
				b.WriteString(l[i+2:] + "\n")
			}
		case strings.HasPrefix(l, "+"), strings.HasPrefix(l, "-"):
			b.WriteString(l[1:] + "\n")
		}
	}
	pr.changed = b.String()
	return pr
}
