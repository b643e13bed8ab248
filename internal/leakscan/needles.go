// Package leakscan looks for an instance's solution where it must not be:
// in an image a dataset's environment comes from (a pulled image is not
// trusted more than one built here), and in the starting point a
// container is taken to before a prediction is applied.
//
// An image is read as the engine saves it (`docker save`): every layer's
// files, those a later layer deletes or replaces included; the objects of
// every git repository in any layer, decompressed and resolved by git
// itself; compiled Python (.pyc), which holds a module's string constants
// and names but not its source lines; and the image's configuration
// (labels and environment) and history (each step's command). A starting
// point is read as the engine exports a container's file system.
//
// What it looks for (Needles) is the instance's feature: the source lines
// its solution adds (or its mask removes), their string literals and
// docstrings, and the names it defines. Each finding says where it is and
// whether it reaches the starting point: what the harness replaces or
// removes before the prediction is applied (/testbed's masked files, its
// .git, /root/my_repo, caches) does not; a file elsewhere, an ENV value, a
// second git repository do; a label, a history step or a file a later
// layer deleted are in the published image only.
package leakscan

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/patch"
)

// Minimum lengths of what is looked for: shorter lines ("return x") and
// strings occur anywhere and prove nothing.
const (
	minLine    = 20
	minLiteral = 16
	minName    = 4
)

// sentence says whether a literal reads as text (two spaces at least):
// a docstring's or a message's, not an identifier or a format that any
// module may hold.
func sentence(s string) bool { return len(s) >= minLiteral && strings.Count(s, " ") >= 2 }

// Needles are what of one instance's solution a scan looks for.
type Needles struct {
	Instance string
	// Lines are the solution's source lines, trimmed.
	Lines []string
	// Literals are its string literals and docstring lines: what a
	// compiled module keeps of its text.
	Literals []string
	// Names are the functions and classes it defines; Files the files it
	// changes (their compiled copies hold the names).
	Names []string
	Files []string
}

var (
	// importLine matches an import: any module that uses the same names
	// has it, so it proves nothing.
	importLine = regexp.MustCompile(`^(from\s+\S+\s+)?import\s`)
	defName    = regexp.MustCompile(`^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)`)
	quoted     = regexp.MustCompile(`"([^"\\]*(?:\\.[^"\\]*)*)"|'([^'\\]*(?:\\.[^'\\]*)*)'`)
)

// NeedlesOf is what the instance's solution is, by the dataset's layout:
// the lines its gold patch adds, or, where the patch masks the feature
// (FeatureBench's layout, and a level 2 instance's mask_patch), the lines
// the mask removes. Test files are left out: they are the grader's, not the
// solution.
func NeedlesOf(ds *bench.Dataset, in *bench.Instance) Needles {
	diff, sign := in.Patch, '+'
	if ds.LayoutOrDefault() == bench.LayoutMasked {
		sign = '-'
	}
	if in.Level == 2 && in.MaskPatch != "" {
		diff, sign = in.MaskPatch, '-'
	}
	n := Needles{Instance: in.InstanceID}
	tests := map[string]bool{}
	for _, id := range append(slices.Clone(in.FailToPass), in.PassToPass...) {
		f, _, _ := strings.Cut(id, "::")
		tests[f] = true
	}
	if _, err := patch.Parse([]byte(diff)); err != nil {
		return n
	}
	seen := map[string]bool{}
	add := func(list *[]string, s string) {
		if !seen[s] {
			seen[s] = true
			*list = append(*list, s)
		}
	}
	// The diff line by line: a section's header names its files, its
	// hunks' lines follow (checked by patch.Parse above).
	var oldPath, file string
	skip, inHunk, inDoc := true, false, false
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			skip, inHunk, inDoc, oldPath = true, false, false, ""
			continue
		case !inHunk && strings.HasPrefix(l, "--- "):
			oldPath = strings.TrimPrefix(strings.TrimPrefix(l[4:], "a/"), "/dev/null")
			continue
		case !inHunk && strings.HasPrefix(l, "+++ "):
			newPath := strings.TrimPrefix(strings.TrimPrefix(l[4:], "b/"), "/dev/null")
			file = newPath
			if sign == '-' || file == "" {
				file = oldPath
			}
			skip = file == "" || tests[file] || !strings.HasSuffix(file, ".py")
			if !skip {
				add(&n.Files, file)
			}
			continue
		case strings.HasPrefix(l, "@@"):
			inHunk = true
			continue
		}
		if skip || !inHunk || len(l) == 0 || l[0] != byte(sign) {
			continue
		}
		text := strings.TrimSpace(l[1:])
		if len(text) >= minLine && !importLine.MatchString(text) {
			add(&n.Lines, text)
		}
		if m := defName.FindStringSubmatch(l[1:]); m != nil && len(m[1]) >= minName {
			add(&n.Names, m[1])
		}
		// Docstring lines: between triple quotes.
		triples := strings.Count(text, `"""`) + strings.Count(text, `'''`)
		body := strings.Trim(text, `"' `)
		if (inDoc || triples > 0) && sentence(body) && !strings.ContainsAny(body, "\"'") {
			add(&n.Literals, body)
		}
		if triples%2 == 1 {
			inDoc = !inDoc
		}
		if !inDoc && triples == 0 {
			for _, m := range quoted.FindAllStringSubmatch(text, -1) {
				s := m[1] + m[2]
				if sentence(s) && !strings.Contains(s, `\`) {
					add(&n.Literals, s)
				}
			}
		}
	}
	return n
}

// compiledOf says whether the .pyc at p is a compiled copy of one of files:
// pkg/__pycache__/mod.cpython-311.pyc (or pkg/mod.pyc) of pkg/mod.py.
func compiledOf(p string, files []string) bool {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if path.Base(dir) == "__pycache__" {
		dir = path.Dir(dir)
	}
	mod, _, _ := strings.Cut(base, ".")
	src := path.Join(dir, mod+".py")
	for _, f := range files {
		if strings.HasSuffix(src, "/"+f) {
			return true
		}
	}
	return false
}
