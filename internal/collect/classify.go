package collect

import (
	"github.com/featbench/featbench/internal/objid"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/featbench/featbench/internal/trace"
)

// classifyOut is a candidate's tested top-level objects, and how each
// imported object was judged.
type classifyOut struct {
	Method    string     `json:"method"` // "rules" or "llm"
	Note      string     `json:"note,omitempty"`
	Tops      []string   `json:"tops"` // object ids, sorted
	Decisions []decision `json:"decisions"`
}

// decision is how one object the test file imports was judged, by the
// criteria of the paper's expert guideline (000, Figure 19).
type decision struct {
	ID          string `json:"id"`
	Name        string `json:"name"`         // as the test file writes it
	Called      bool   `json:"called"`       // the traced run entered it
	Assert      bool   `json:"assert"`       // (1) used in assertions
	NameMatch   bool   `json:"name_match"`   // (2) its name matches the test file's
	ModuleMatch bool   `json:"module_match"` // (3) its module matches the test file's
	Utility     bool   `json:"utility"`      // (4) from a utility or test module
	Frequent    bool   `json:"frequent"`     // (5) among the most used
	Uses        int    `json:"uses"`
	Top         bool   `json:"top"`
}

// importedObject is a repository function or class the test file imports,
// directly or as an attribute of an imported module.
type importedObject struct {
	id, name, file string
	uses, asserts  int
}

// importedObjects lists the repository objects a test file uses through
// its imports (external libraries are left out: step 3 of the guideline).
func importedObjects(imports []trace.Import) []importedObject {
	byID := map[string]*importedObject{}
	add := func(id, name, file string, uses, asserts int) {
		if id == "" {
			return
		}
		o := byID[id]
		if o == nil {
			o = &importedObject{id: id, name: name, file: file}
			byID[id] = o
		}
		o.uses += uses
		o.asserts += asserts
	}
	for _, im := range imports {
		switch im.Kind {
		case "repo-object":
			name := im.Name
			if im.Alias != "" {
				name = im.Alias
			}
			add(im.ID, name, im.File, im.Uses, im.AssertUses)
		case "repo-module":
			for _, a := range im.Attrs {
				if a.Kind == "repo-object" {
					add(a.ID, a.Name, a.File, a.Uses, a.AssertUses)
				}
			}
		}
	}
	out := make([]importedObject, 0, len(byID))
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		out = append(out, *byID[id])
	}
	return out
}

// utilityParts are path components and module names of auxiliary code
// (criterion 4).
var utilityParts = map[string]bool{
	"util": true, "utils": true, "helper": true, "helpers": true, "testing": true, "tests": true, "test": true,
	"common": true, "compat": true, "misc": true, "tools": true, "support": true, "fixtures": true, "conftest": true,
}

// isUtility reports whether a file is a utility or test module: a utility
// folder or module name, a private module (_name.py), or test code.
func isUtility(file string) bool {
	if isTestPath(file) {
		return true
	}
	stem := strings.TrimSuffix(path.Base(file), ".py")
	if strings.HasPrefix(stem, "_") && stem != "__init__" && stem != "__main__" {
		return true
	}
	for _, p := range strings.Split(strings.TrimSuffix(file, ".py"), "/") {
		if utilityParts[strings.Trim(strings.ToLower(p), "_")] {
			return true
		}
	}
	return false
}

// words splits an identifier or file stem into lower-case words
// (snake_case and CamelCase), without test markers, singular.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			w := strings.ToLower(string(cur))
			if w != "test" && w != "tests" {
				if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
					w = strings.TrimSuffix(w, "s")
				}
				out = append(out, w)
			}
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

func overlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y && len(x) > 1 {
				return true
			}
		}
	}
	return false
}

// classifyRules is the deterministic classifier: the paper's expert
// guideline (000, Figure 19) turned into rules. An object the traced run
// never entered cannot be a task's start and is not top. Otherwise the
// first three criteria (assertions, name, module) decide: two or more
// make it top; one makes it top unless it comes from a utility module and
// is not among the most used; none leaves it out unless it is among the
// most used and not a utility (the last two criteria count only when the
// first three do not decide, as the guideline says).
//
// A top class brings with it the methods the test file's functions call
// directly, so that a class seen in pass-to-pass runs (its body runs on
// import) can still give its tested methods.
func classifyRules(testFile string, imports []trace.Import, g *trace.Graph) classifyOut {
	objs := importedObjects(imports)
	maxUses := 0
	for _, o := range objs {
		if o.uses > maxUses {
			maxUses = o.uses
		}
	}
	testWords := words(strings.TrimSuffix(path.Base(testFile), ".py"))
	out := classifyOut{Method: "rules"}
	tops := map[string]bool{}
	for _, o := range objs {
		_, qual, _, _ := objid.Parse(o.id)
		last := qual[strings.LastIndex(qual, ".")+1:]
		modWords := words(strings.TrimSuffix(path.Base(o.file), ".py"))
		if dir := path.Base(path.Dir(o.file)); dir != "." {
			modWords = append(modWords, words(dir)...)
		}
		d := decision{
			ID: o.id, Name: o.name, Uses: o.uses,
			Called:      g.Node(o.id) != nil,
			Assert:      o.asserts > 0,
			NameMatch:   overlap(words(last), testWords),
			ModuleMatch: overlap(modWords, testWords),
			Utility:     isUtility(o.file),
			Frequent:    o.uses >= 2 && o.uses*2 >= maxUses,
		}
		primary := 0
		for _, b := range []bool{d.Assert, d.NameMatch, d.ModuleMatch} {
			if b {
				primary++
			}
		}
		switch {
		case !d.Called || isTestPath(o.file):
		case primary >= 2:
			d.Top = true
		case primary == 1:
			d.Top = !d.Utility || d.Frequent
		default:
			d.Top = d.Frequent && !d.Utility
		}
		if d.Top {
			tops[o.id] = true
		}
		out.Decisions = append(out.Decisions, d)
	}
	for id := range tops {
		for _, m := range testedMethods(id, testFile, g) {
			tops[m] = true
		}
	}
	out.Tops = slices.Sorted(maps.Keys(tops))
	return out
}

// testedMethods are the methods of class id that code in the test file
// calls directly.
func testedMethods(id, testFile string, g *trace.Graph) []string {
	n := g.Node(id)
	if n == nil || n.Kind != trace.KindClass {
		return nil
	}
	prefix := n.Qualname + "."
	seen := map[string]bool{}
	for _, caller := range g.Nodes {
		if caller.File != testFile {
			continue
		}
		for _, c := range caller.Callees {
			m := g.Node(c)
			if m != nil && m.File == n.File && strings.HasPrefix(m.Qualname, prefix) && !strings.Contains(m.Qualname[len(prefix):], ".") {
				seen[c] = true
			}
		}
	}
	out := slices.Sorted(maps.Keys(seen))
	sort.Strings(out)
	return out
}
