package mask

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/featbench/featbench/internal/objid"
	"slices"
	"strings"
)

//go:embed masker.py
var script []byte

// ScriptName is the file name the script is installed under.
const ScriptName = "masker.py"

// Script returns the masker's Python source.
func Script() []byte { return bytes.Clone(script) }

// Command is the argv that runs the script installed at scriptPath on the
// request file requestPath; the working directory must be the repository
// root.
func Command(scriptPath, requestPath string) []string {
	return []string{"python3", scriptPath, requestPath}
}

// Request is what the script reads.
type Request struct {
	// Remove lists the ids of the objects to remove.
	Remove []string `json:"remove"`
	// Describe lists the ids of the objects to describe (the top-level
	// objects of a task), from the original sources.
	Describe []string `json:"describe,omitempty"`
	// ProtectFiles are never edited (the test files).
	ProtectFiles []string `json:"protect_files,omitempty"`
	// Level2, when set, asks for the level-2 test file.
	Level2 *Level2 `json:"level2,omitempty"`
}

// Level2 asks for a test file rewritten to import the top names from
// agent_code.
type Level2 struct {
	// TestFile is the test file's path, relative to the root.
	TestFile string `json:"test_file"`
	// Package is the library's import name (e.g. "textkit").
	Package string `json:"package"`
	// Names are the top names: module-level names of modules in Package.
	Names []string `json:"names"`
}

// Validate checks the ids and paths of the request.
func (r *Request) Validate() error {
	var errs []error
	check := func(field string, ids []string) {
		for _, id := range ids {
			_, q, _, err := objid.Parse(id)
			if err == nil && q == objid.ModuleQualname {
				err = fmt.Errorf("object id %q names module-level code", id)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", field, err))
			}
		}
	}
	check("remove", r.Remove)
	check("describe", r.Describe)
	for _, p := range r.ProtectFiles {
		if err := objid.CheckPath(p); err != nil {
			errs = append(errs, fmt.Errorf("protect_files: %w", err))
		}
	}
	if l := r.Level2; l != nil {
		if err := objid.CheckPath(l.TestFile); err != nil {
			errs = append(errs, fmt.Errorf("level2.test_file: %w", err))
		}
		if l.Package == "" || !objid.IsDotted(l.Package) {
			errs = append(errs, fmt.Errorf("level2.package %q is not a dotted module name", l.Package))
		}
		for _, n := range l.Names {
			if !objid.IsIdentifier(n) {
				errs = append(errs, fmt.Errorf("level2.names: %q is not a Python name", n))
			}
		}
	}
	return errors.Join(errs...)
}

// Result is what the script prints.
type Result struct {
	// Files are the edited files, sorted by path.
	Files []File `json:"files"`
	// Lines is the number of lines removed over all edited files (a line
	// rewritten counts once): roughly the lines the gold patch adds.
	Lines int `json:"lines"`
	// Functions counts the removed defs (requested ones and companions, not
	// defs nested in them).
	Functions int `json:"functions"`
	// Interfaces are the stubs of the described objects, sorted by path and
	// line.
	Interfaces []Interface `json:"interfaces"`
	// Undescribed are the removed objects that code which stays reaches by
	// name (a retained module, a test file, __all__, a dunder of a class
	// that stays) but Describe does not list: a statement without them is
	// incomplete. Empty when every such object is described.
	Undescribed []Undescribed `json:"undescribed,omitempty"`
	// Level2Test is the rewritten test file, when Request.Level2 was set:
	// every name it imported from the package (by any import or attribute
	// chain) it imports from agent_code, and nothing from the package.
	Level2Test *string `json:"level2_test,omitempty"`
	// Level2Problem is why level 2 cannot be made (Request.Level2 was set
	// and the other Level2 fields are empty): the test file uses a module of
	// the package as an object, or needs code the feature removes that the
	// statement does not describe.
	Level2Problem string `json:"level2_problem,omitempty"`
	// Level2Names are the names the level 2 test imports from agent_code.
	Level2Names []string `json:"level2_names,omitempty"`
	// Level2Vendor is the level 2 reference solution: the package's
	// modules the names need, from the original sources, copied under
	// agent_code/ with the package's name rewritten.
	Level2Vendor []VendoredFile `json:"level2_vendor,omitempty"`
	// Level2Given is the code the level 2 tests use that is not the
	// feature (the statement gives it whole), by module.
	Level2Given []Given `json:"level2_given,omitempty"`
	// Level2Interfaces are Interfaces as level 2 shows them: a class is
	// whole but for its removed members.
	Level2Interfaces []Interface `json:"level2_interfaces,omitempty"`
}

// Undescribed is a removed object the statement must describe.
type Undescribed struct {
	ID        string `json:"id"`
	ReachedBy string `json:"reached_by"` // the file that names it, or why it is reached
}

// VendoredFile is one file of the level 2 reference solution.
type VendoredFile struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

// Given is the code of one module the level 2 tests use unchanged.
type Given struct {
	Module  string   `json:"module"`
	Imports []string `json:"imports"` // import statements it needs, outside the package
	Code    []string `json:"code"`    // module-level statements, in source order
}

// File is one edited file.
type File struct {
	Path string `json:"path"`
	// Removed are the objects removed from this file, requested ones and
	// companions (not those nested in them), by line.
	Removed []Removed `json:"removed"`
	// Dependents are the class-body statements removed because they name
	// a removed member (an alias such as __or__ = union), by line.
	Dependents []Dependent `json:"dependents"`
	// ImportsRemoved are the import names removed, one per name, as
	// "from M import x as y" or "import M", in source order.
	ImportsRemoved []string `json:"imports_removed"`
	// AllRemoved are the names removed from __all__.
	AllRemoved []string `json:"all_removed"`
}

// Removed is one removed object and its span in the original file.
type Removed struct {
	ID    string `json:"id"`
	Start int    `json:"start"` // first decorator's line
	End   int    `json:"end"`
}

// Dependent is a class-body statement that went with the members it
// names: left behind, it would fail on import or bind another object of
// that name (an import the module makes).
type Dependent struct {
	Class string   `json:"class"` // the class's qualname
	Names []string `json:"names"` // the names it bound, sorted
	Start int      `json:"start"`
	End   int      `json:"end"`
}

// Interface is the stub of one module-level def or class holding described
// objects (the object itself, or its described methods).
type Interface struct {
	ID       string `json:"id"`
	Path     string `json:"path"`
	Kind     string `json:"kind"` // "class", "function" or "async function"
	Qualname string `json:"qualname"`
	Line     int    `json:"line"`
	// Described says whether the object itself was described, not only
	// members inside it.
	Described bool `json:"described"`
	// Docstring is the object's cleaned docstring; nil when it has none.
	Docstring *string `json:"docstring"`
	// Code is the stub, ending in a newline.
	Code string `json:"code"`
	// DocLine is the index of the line of Code where the docstring starts
	// or would go, and Indent that line's indentation.
	DocLine int    `json:"doc_line"`
	Indent  string `json:"indent"`
	// Members are the described objects inside this one, by line.
	Members []Member `json:"members"`
}

// Member is a described object rendered inside an [Interface].
type Member struct {
	ID        string  `json:"id"`
	Qualname  string  `json:"qualname"`
	Kind      string  `json:"kind"` // "method", "class", "function" or "async function"
	Docstring *string `json:"docstring"`
	DocLine   int     `json:"doc_line"`
	Indent    string  `json:"indent"`
}

// ParseResult decodes the script's output. Unknown fields are an error, so
// that the script and these types cannot drift apart unnoticed.
func ParseResult(data []byte) (*Result, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decode masker result: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decode masker result: trailing data after the JSON object")
	}
	return &r, nil
}

// WithDocstrings returns the stub with docstrings added where it has none:
// docs maps an object id (the interface's or a member's) to the docstring's
// text. Objects that have a docstring keep it.
func (in *Interface) WithDocstrings(docs map[string]string) string {
	type slot struct {
		line   int
		indent string
		text   string
	}
	var slots []slot
	add := func(id string, have *string, line int, indent string) {
		if d, ok := docs[id]; ok && have == nil && strings.TrimSpace(d) != "" {
			slots = append(slots, slot{line, indent, d})
		}
	}
	add(in.ID, in.Docstring, in.DocLine, in.Indent)
	for _, m := range in.Members {
		add(m.ID, m.Docstring, m.DocLine, m.Indent)
	}
	lines := strings.Split(in.Code, "\n")
	// Insert from the bottom up so the earlier line numbers stay valid.
	slices.SortFunc(slots, func(a, b slot) int { return b.line - a.line })
	for _, s := range slots {
		at := min(max(s.line, 0), len(lines))
		lines = slices.Insert(lines, at, docstringLines(s.indent, s.text)...)
	}
	return strings.Join(lines, "\n")
}

// docstringLines renders text as a triple-quoted docstring whose value is
// text (trimmed), indented by indent.
func docstringLines(indent, text string) []string {
	text = strings.TrimSpace(text)
	text = strings.ReplaceAll(text, `\`, `\\`)
	text = strings.ReplaceAll(text, `"""`, `\"\"\"`)
	if strings.HasSuffix(text, `"`) {
		// A quote right before the closing """ would end the string early.
		text = text[:len(text)-1] + `\"`
	}
	parts := strings.Split(text, "\n")
	if len(parts) == 1 {
		return []string{indent + `"""` + text + `"""`}
	}
	out := []string{indent + `"""` + parts[0]}
	for _, p := range parts[1:] {
		p = strings.TrimRight(p, " \t\r")
		if p == "" {
			out = append(out, "")
		} else {
			out = append(out, indent+p)
		}
	}
	return append(out, indent+`"""`)
}
