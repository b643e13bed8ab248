// Package pydefs lists the definitions of Python files (functions,
// classes, methods, with their spans, signatures, docstrings and a digest
// of their code) and compares two versions of a file: what a patch added,
// removed or changed. The history-based collection methods judge pull
// requests by it (paper 003 keeps a patch that only modifies existing
// functions; 004 finds the components a patch adds).
//
// The work is done by an embedded script ([Script], standard library only)
// that runs inside a container of the repository's Python, so that the
// syntax is the one the project's code is written for:
//
//	python3 -I /fb/pydefs.py REQUEST.json
//
// It reads a [Request] and prints a [Result] as JSON on stdout; the
// script's own doc string gives the contract in full.
package pydefs

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
)

//go:embed pydefs.py
var script []byte

// ScriptName is the script's file name in a container.
const ScriptName = "pydefs.py"

// Script is the embedded script's source.
func Script() []byte { return slices.Clone(script) }

// Request is the script's input.
type Request struct {
	Files []Source `json:"files"`
}

// Source is one file to read: a key of the caller's and its text.
type Source struct {
	Key    string `json:"key"`
	Source string `json:"source"`
}

// Result is the script's output: one File per request file, in order.
type Result struct {
	Files []File `json:"files"`
}

// File is one source's definitions, or why it could not be read (a
// syntax error, with its line).
type File struct {
	Key   string `json:"key"`
	Error string `json:"error,omitempty"`
	Defs  []Def  `json:"defs"`
}

// Def is one definition.
type Def struct {
	Name      string  `json:"name"` // qualified: Class.method
	Kind      string  `json:"kind"` // function, method or class
	Start     int     `json:"start"`
	End       int     `json:"end"`
	Line      int     `json:"line"` // of the def or class keyword
	Signature string  `json:"signature"`
	Docstring *string `json:"docstring"`
	Hash      string  `json:"hash"`
}

// ParseResult reads the script's output and checks it answers the
// request: one file per request file, with the same keys.
func ParseResult(out []byte, req Request) (*Result, error) {
	var r Result
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("reading %s's output: %w", ScriptName, err)
	}
	if len(r.Files) != len(req.Files) {
		return nil, fmt.Errorf("%s answered %d files of %d", ScriptName, len(r.Files), len(req.Files))
	}
	for i, f := range r.Files {
		if f.Key != req.Files[i].Key {
			return nil, fmt.Errorf("%s answered %q for %q", ScriptName, f.Key, req.Files[i].Key)
		}
	}
	return &r, nil
}

// Changes are what differs between two versions of a file's definitions,
// by qualified name, each list sorted by name.
type Changes struct {
	Added    []Def `json:"added,omitempty"`    // in the new version only (the new version's)
	Removed  []Def `json:"removed,omitempty"`  // in the old version only (the old version's)
	Modified []Def `json:"modified,omitempty"` // in both, with other code (the new version's)
}

// Compare compares two versions of a file. A name defined more than once
// (a property's getter and setter, a def under if and else) is matched
// in order of appearance, so one more or one fewer is an addition or a
// removal.
func Compare(old, new []Def) Changes {
	var c Changes
	byName := func(ds []Def) map[string][]Def {
		m := map[string][]Def{}
		for _, d := range ds {
			m[d.Name] = append(m[d.Name], d)
		}
		return m
	}
	o, n := byName(old), byName(new)
	names := map[string]bool{}
	for k := range o {
		names[k] = true
	}
	for k := range n {
		names[k] = true
	}
	for _, name := range sortedKeys(names) {
		os, ns := o[name], n[name]
		for i := 0; i < max(len(os), len(ns)); i++ {
			switch {
			case i >= len(os):
				c.Added = append(c.Added, ns[i])
			case i >= len(ns):
				c.Removed = append(c.Removed, os[i])
			case os[i].Hash != ns[i].Hash:
				c.Modified = append(c.Modified, ns[i])
			}
		}
	}
	return c
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
