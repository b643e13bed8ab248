// Package trace records which of a repository's functions and classes a
// test file exercises, and how they call each other: the object dependency
// graph of FeatureBench's collection method (paper 000, section 3.2).
//
// The recording is done by tracer.py, embedded here and run in the
// repository's container: it runs pytest in-process under sys.setprofile
// (and threading.setprofile) on Python 3.11, sys.monitoring on 3.12 and
// later, and writes a Graph as JSON. This package reads
// that JSON, exports it as DOT, and walks it breadth-first to choose the
// code a task removes.
package trace

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

//go:embed tracer.py
var script []byte

// ScriptName is the tracer's file name where it is copied.
const ScriptName = "tracer.py"

// Script returns the tracer's source.
func Script() []byte { return script }

// Version is the graph format tracer.py writes.
const Version = 1

// Node kinds.
const (
	KindFunction = "function"
	KindMethod   = "method"
	KindClass    = "class"
	KindModule   = "module" // a module's top-level code
)

// Graph is one traced pytest run: the repository's functions and classes it
// entered, and the test files' imports.
type Graph struct {
	Version  int      `json:"version"`
	Root     string   `json:"root"` // the repository's folder in the container
	Args     []string `json:"args"` // pytest's arguments
	ExitCode int      `json:"exit_code"`
	Seconds  float64  `json:"seconds"` // pytest's wall time under the hook
	Python   string   `json:"python"`
	// Hook is what the tracer hooked: "sys.setprofile" (Python 3.11) or
	// "sys.monitoring" (3.12 and later).
	Hook string `json:"hook,omitempty"`
	// Counts is "exact" when every call was counted, "bounded" when the
	// tracer's event budget stopped counting a hot loop's repeated calls
	// (a code location disabled after its budget, or the hook dropped for
	// the rest of a test: docs/collection.md, "Call counts"): each node's
	// Calls is then a lower bound. The nodes and edges are what collection
	// uses, and a new caller is still seen. Empty in older graphs: exact.
	Counts string `json:"counts,omitempty"`
	Nodes  []Node `json:"nodes"` // sorted by ID
	// Imports are each traced test file's import statements, resolved.
	Imports map[string][]Import `json:"imports"`
	// ImportRefs are the functions and classes that the import-time code
	// of the loaded repository modules references (module level, class
	// bodies, decorators, defaults), whether or not they ran: removing
	// one breaks an import.
	ImportRefs []string `json:"import_refs"`
	Notes      []string `json:"notes"`

	byID map[string]int
}

// Node is a function, method or class of the repository (or a module's
// top-level code) that ran.
type Node struct {
	// ID is path::qualname::line: the file relative to the repository,
	// the qualified name without "<locals>.", the def or class line.
	ID       string `json:"id"`
	File     string `json:"file"`
	Qualname string `json:"qualname"`
	Line     int    `json:"line"`
	// Start and End are the source span, decorators included (0 for a
	// module).
	Start int    `json:"start"`
	End   int    `json:"end"`
	Kind  string `json:"kind"`
	// Local says the node is defined inside a function body: it exists
	// only while that function runs, and goes with it.
	Local bool `json:"local,omitempty"`
	// Calls counts the times the node was entered (a generator counts
	// each resumption; a class, the run of its body); a lower bound when
	// the graph's Counts is "bounded".
	Calls int `json:"calls"`
	// Callees are the nodes it called, directly or through code outside
	// the repository, and the functions defined in it that ran (a
	// closure's calls are the work of the function that made it), sorted.
	Callees []string `json:"callees"`
	// Refs are the functions and classes its own code names without
	// calling (a method taken as a value: self.islice = _list.islice), by
	// its syntax tree, sorted: what code that ran needs besides its
	// callees. They need not be nodes.
	Refs []string `json:"refs,omitempty"`
}

// Lines is the node's span in lines, decorators included.
func (n *Node) Lines() int {
	if n.Start <= 0 || n.End < n.Start {
		return 0
	}
	return n.End - n.Start + 1
}

// Import is one name a test file imports, with how the file uses it.
type Import struct {
	Line   int    `json:"line"`
	Module string `json:"module"` // the module imported, or imported from
	Name   string `json:"name"`   // the name imported from Module; "" for "import Module"
	Alias  string `json:"alias"`
	// Kind: "repo-object" (a function or class of the repository: ID is
	// set), "repo-module", "repo-value" (a constant, an instance),
	// "external", "external-module" or "unresolved".
	Kind       string `json:"kind"`
	ID         string `json:"id"`
	File       string `json:"file"`
	Uses       int    `json:"uses"`        // loads of the bound name
	AssertUses int    `json:"assert_uses"` // of which in assert statements or pytest.raises blocks
	Attrs      []Attr `json:"attrs"`       // attributes used through the name
}

// Attr is an attribute used through an imported name: a module's function
// or class, a class's method.
type Attr struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	ID         string `json:"id"`
	File       string `json:"file"`
	Uses       int    `json:"uses"`
	AssertUses int    `json:"assert_uses"`
}

// Decode reads a graph and checks that it holds together: a known version,
// unique node ids in order, callees that are nodes.
func Decode(r io.Reader) (*Graph, error) {
	var g Graph
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return nil, fmt.Errorf("reading trace graph: %w", err)
	}
	if g.Version != Version {
		return nil, fmt.Errorf("trace graph version %d; this program reads version %d", g.Version, Version)
	}
	if err := g.index(); err != nil {
		return nil, err
	}
	return &g, nil
}

func (g *Graph) index() error {
	g.byID = make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		if _, dup := g.byID[n.ID]; dup {
			return fmt.Errorf("trace graph: node %s twice", n.ID)
		}
		if i > 0 && g.Nodes[i-1].ID > n.ID {
			return fmt.Errorf("trace graph: nodes not sorted at %s", n.ID)
		}
		g.byID[n.ID] = i
	}
	for _, n := range g.Nodes {
		for _, c := range n.Callees {
			if _, ok := g.byID[c]; !ok {
				return fmt.Errorf("trace graph: node %s calls %s, which is not a node", n.ID, c)
			}
		}
	}
	return nil
}

// Counts values.
const (
	CountsExact   = "exact"
	CountsBounded = "bounded"
)

// Bounded says the graph's call counts are lower bounds.
func (g *Graph) Bounded() bool { return g.Counts == CountsBounded }

// CallsLabel is a node's call count as text: "12 calls", or "≥ 12 calls"
// when the counts are bounded.
func (g *Graph) CallsLabel(n *Node) string {
	if g.Bounded() {
		return fmt.Sprintf("≥ %d calls", n.Calls)
	}
	return fmt.Sprintf("%d calls", n.Calls)
}

// Node returns the node with the id, or nil.
func (g *Graph) Node(id string) *Node {
	if g.byID == nil {
		if err := g.index(); err != nil {
			return nil
		}
	}
	i, ok := g.byID[id]
	if !ok {
		return nil
	}
	return &g.Nodes[i]
}

// IDs is the set of the graph's node ids.
func (g *Graph) IDs() map[string]bool {
	m := make(map[string]bool, len(g.Nodes))
	for _, n := range g.Nodes {
		m[n.ID] = true
	}
	return m
}

// Reached is the set of objects the run needs: the nodes it entered, what
// they reference, and the objects import-time code referenced.
func (g *Graph) Reached() map[string]bool {
	m := g.IDs()
	for _, n := range g.Nodes {
		for _, id := range n.Refs {
			m[id] = true
		}
	}
	for _, id := range g.ImportRefs {
		m[id] = true
	}
	return m
}

// Options describe one traced pytest run.
type Options struct {
	Python string   // "python3" when empty
	Script string   // where tracer.py is in the container
	Root   string   // the repository
	Out    string   // where the graph is written
	Tests  []string // test files whose imports are resolved, relative to Root
	Args   []string // pytest's arguments, test files included
}

// Command is the argv of a traced run. The tracer exits with pytest's
// status.
func Command(o Options) ([]string, error) {
	if o.Script == "" || o.Root == "" || o.Out == "" {
		return nil, errors.New("trace command: script, root and output are required")
	}
	py := o.Python
	if py == "" {
		py = "python3"
	}
	argv := []string{py, o.Script, "--root", o.Root, "--out", o.Out}
	for _, t := range o.Tests {
		argv = append(argv, "--test", t)
	}
	argv = append(argv, "--")
	return append(argv, o.Args...), nil
}
