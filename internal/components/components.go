package components

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/objid"
)

//go:embed components.py
var script []byte

// ScriptName is the file name the script is installed under.
const ScriptName = "components.py"

// Script returns the script's Python source.
func Script() []byte { return bytes.Clone(script) }

// Command is the argv that runs the script installed at scriptPath on the
// request file requestPath, in Python's isolated mode (no PYTHON*
// variables, no user site, not the working folder on the path).
func Command(scriptPath, requestPath string) []string {
	return []string{"python3", "-I", scriptPath, requestPath}
}

// Request is what the script reads: one or more changes.
type Request struct {
	Changes []Change `json:"changes"`
}

// Change is one code patch: the Python files it touches.
type Change struct {
	ID    string       `json:"id"` // the caller's name for it, echoed back
	Files []FileChange `json:"files"`
}

// FileChange is one file before and after. A nil side (JSON null) is a
// file that does not exist there; an empty, non-nil one is an empty file.
type FileChange struct {
	Path   string `json:"path"`
	Before []byte `json:"before"`
	After  []byte `json:"after"`
}

// Validate checks the request's paths and ids.
func (r *Request) Validate() error {
	var errs []error
	ids := map[string]bool{}
	for i, c := range r.Changes {
		if ids[c.ID] {
			errs = append(errs, fmt.Errorf("changes[%d].id %q is given twice", i, c.ID))
		}
		ids[c.ID] = true
		paths := map[string]bool{}
		for j, f := range c.Files {
			if err := objid.CheckPath(f.Path); err != nil {
				errs = append(errs, fmt.Errorf("changes[%d].files[%d].path: %w", i, j, err))
			}
			if paths[f.Path] {
				errs = append(errs, fmt.Errorf("changes[%d].files[%d].path %q is given twice", i, j, f.Path))
			}
			paths[f.Path] = true
			if f.Before == nil && f.After == nil {
				errs = append(errs, fmt.Errorf("changes[%d].files[%d] (%s) has neither side", i, j, f.Path))
			}
		}
	}
	return errors.Join(errs...)
}

// Result is what the script prints: one ChangeResult per change, in order.
type Result struct {
	Changes []ChangeResult `json:"changes"`
}

// ChangeResult is one change's files, in the request's order.
type ChangeResult struct {
	ID    string       `json:"id"`
	Files []FileResult `json:"files"`
}

// FileResult is one file's new components and line counts.
type FileResult struct {
	Path           string      `json:"path"`
	Added          int         `json:"added"`
	Removed        int         `json:"removed"`
	ComponentLines int         `json:"component_lines"`
	Components     []Component `json:"components"`
	// Error is why the file could not be read as Python, on either side;
	// "" when it could.
	Error string `json:"error,omitempty"`
}

// Component is one new function, class or method.
type Component struct {
	Name      string  `json:"name"` // qualified: Class.method
	Kind      string  `json:"kind"` // "function", "class" or "method"
	Signature string  `json:"signature"`
	Docstring *string `json:"docstring"`
	Line      int     `json:"line"`  // the first def or class keyword's line
	Spans     [][]int `json:"spans"` // [first decorator, last line] of each definition
	Lines     int     `json:"lines"` // added lines inside the spans
	// SameAs is path::qualname of a removed definition with the same
	// code: the component is moved or renamed, not new code.
	SameAs string `json:"same_as,omitempty"`
}

// ParseResult decodes the script's output. Unknown fields are an error, so
// that the script and these types cannot drift apart unnoticed.
func ParseResult(data []byte) (*Result, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decode components result: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decode components result: trailing data after the JSON object")
	}
	for i, c := range r.Changes {
		for j, f := range c.Files {
			if f.Added < 0 || f.Removed < 0 || f.ComponentLines < 0 || f.ComponentLines > f.Added {
				return nil, fmt.Errorf("decode components result: changes[%d].files[%d] (%s) counts %d added, %d removed and %d component lines", i, j, f.Path, f.Added, f.Removed, f.ComponentLines)
			}
			for k, comp := range f.Components {
				if !validKind(comp.Kind) || comp.Name == "" || comp.Signature == "" || len(comp.Spans) == 0 {
					return nil, fmt.Errorf("decode components result: changes[%d].files[%d].components[%d] (%s) is incomplete", i, j, k, comp.Name)
				}
			}
		}
	}
	return &r, nil
}

func validKind(k string) bool {
	for _, x := range bench.ComponentKinds {
		if k == x {
			return true
		}
	}
	return false
}

// Share is the part of a change's edited lines that its new components
// account for: ComponentLines over the Python files' added and removed
// lines plus otherEdited, the edited lines of the patch's other files.
func (c *ChangeResult) Share(otherEdited int) (share float64, componentLines, edited int) {
	edited = otherEdited
	for _, f := range c.Files {
		componentLines += f.ComponentLines
		edited += f.Added + f.Removed
	}
	if edited == 0 {
		return 0, componentLines, 0
	}
	return float64(componentLines) / float64(edited), componentLines, edited
}

// Components are the change's components, in file and line order.
func (c *ChangeResult) Components() []Component {
	var out []Component
	for _, f := range c.Files {
		out = append(out, f.Components...)
	}
	return out
}

// Bench converts the change's components to the dataset's form.
func (c *ChangeResult) Bench() []bench.Component {
	var out []bench.Component
	for _, f := range c.Files {
		for _, comp := range f.Components {
			bc := bench.Component{File: f.Path, Name: comp.Name, Kind: comp.Kind, Signature: comp.Signature}
			if comp.Docstring != nil {
				bc.Docstring = *comp.Docstring
			}
			out = append(out, bc)
		}
	}
	return out
}

// Errors are the files that could not be read as Python, "path: error".
func (c *ChangeResult) Errors() []string {
	var out []string
	for _, f := range c.Files {
		if f.Error != "" {
			out = append(out, f.Path+": "+f.Error)
		}
	}
	return out
}

// IsPython reports whether a patch path is a file the script reads.
func IsPython(path string) bool { return strings.HasSuffix(path, ".py") }
