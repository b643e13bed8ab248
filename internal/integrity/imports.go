package integrity

import (
	"path"
	"regexp"
	"strings"

	"github.com/featbench/featbench/bench"
)

// originalPackages returns the import names of the instance's project, as
// far as the instance tells them:
//
//   - the top-level packages of its top objects ("textkit/case.py::f"),
//   - the top-level packages and modules of the non-test Python files its
//     patches touch outside agent_code (a "src/" folder is skipped),
//   - the modules the level 2 test patch took names from before it took
//     them from agent_code (`from textkit.case import (x, ...)` becomes
//     `from agent_code import x`),
//   - the last part of the repository's name, as a package name
//     ("featbench/textkit": textkit; "py-foo": py_foo).
func originalPackages(in *bench.Instance) map[string]bool {
	pkgs := map[string]bool{}
	addPath := func(p string) {
		parts := strings.Split(p, "/")
		if len(parts) > 1 && parts[0] == "src" {
			parts = parts[1:]
		}
		switch {
		case len(parts) > 1:
			pkgs[parts[0]] = true
		case strings.HasSuffix(parts[0], ".py"):
			if m := strings.TrimSuffix(parts[0], ".py"); m != "setup" && m != "conftest" && m != "noxfile" {
				pkgs[m] = true
			}
		}
	}
	for _, o := range in.TopObjects {
		if f, _, _ := strings.Cut(o, "::"); strings.HasSuffix(f, ".py") {
			addPath(f)
		}
	}
	for _, diff := range []string{in.Patch, in.TestPatch, in.MaskPatch} {
		for _, fc := range changes([]byte(diff), false) {
			for _, p := range fc.Paths {
				if strings.HasSuffix(p, ".py") && !IsTestPath(p) {
					addPath(p)
				}
			}
		}
	}
	for m := range replacedModules(changes([]byte(in.TestPatch), false)) {
		pkgs[m] = true
	}
	if _, name, _ := strings.Cut(in.Repo, "/"); name != "" {
		name = strings.ToLower(strings.ReplaceAll(path.Base(name), "-", "_"))
		pkgs[name] = true
	}
	delete(pkgs, agentPackage)
	delete(pkgs, "")
	return pkgs
}

var (
	// fromImport reads `from a.b import x, y as z` or its parenthesised
	// start; importStmt reads `import a.b as c, d`.
	fromImport = regexp.MustCompile(`^\s*from\s+([\w.]+)\s+import\s+(.*)$`)
	importStmt = regexp.MustCompile(`^\s*import\s+(.+)$`)
	// dynamicImport reads importlib.import_module("a.b"), __import__("a")
	// and the like, with any quote.
	dynamicImport = regexp.MustCompile(`(import_module|__import__|find_spec|import_from_path|run_module)\(\s*(?:name\s*=\s*)?['"]([\w.]+)['"]`)
)

// replacedModules returns the modules whose names the test patch moved to
// agent_code: the top-level package of every `from X import (...)` on a
// file's old side (context and removed lines) that names a symbol its new
// side imports from agent_code.
func replacedModules(tc []fileChange) map[string]bool {
	out := map[string]bool{}
	for _, fc := range tc {
		moved := map[string]bool{}
		type stmt struct {
			module string
			names  []string
		}
		var old []stmt
		for _, h := range fc.Hunks {
			var open *stmt // a parenthesised import still open
			for i, l := range h.Lines {
				m := h.Marks[i]
				if m != '-' {
					if mod, names, ok := fromNames(l); ok && mod == agentPackage {
						for _, n := range names {
							moved[n] = true
						}
					}
				}
				if m == '+' {
					continue
				}
				if open != nil {
					open.names = append(open.names, splitNames(l)...)
					if strings.Contains(l, ")") {
						old = append(old, *open)
						open = nil
					}
					continue
				}
				if mod, names, ok := fromNames(l); ok {
					s := stmt{module: mod, names: names}
					if strings.Contains(l, "(") && !strings.Contains(l, ")") {
						open = &s
						continue
					}
					old = append(old, s)
				}
			}
			if open != nil {
				old = append(old, *open)
			}
		}
		for _, s := range old {
			for _, n := range s.names {
				if moved[n] && s.module != agentPackage {
					out[topLevel(s.module)] = true
				}
			}
		}
	}
	return out
}

// fromNames reads a `from M import a, b as c` line: M and the imported
// names (as imported, before "as").
func fromNames(l string) (module string, names []string, ok bool) {
	m := fromImport.FindStringSubmatch(l)
	if m == nil {
		return "", nil, false
	}
	return m[1], splitNames(m[2]), true
}

// splitNames reads the names of an import list, or of one line of a
// parenthesised one.
func splitNames(s string) []string {
	if i := strings.Index(s, "#"); i >= 0 {
		s = s[:i]
	}
	s = strings.NewReplacer("(", " ", ")", " ", "\\", " ").Replace(s)
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if f := strings.Fields(part); len(f) > 0 && f[0] != "*" {
			out = append(out, f[0])
		}
	}
	return out
}

func topLevel(module string) string {
	m, _, _ := strings.Cut(strings.TrimLeft(module, "."), ".")
	return m
}

// importsAny says whether any added line imports one of pkgs, statically
// (import, from ... import) or by name (importlib, __import__). Relative
// imports (from . import x) stay inside agent_code and do not count.
func importsAny(lines []string, pkgs map[string]bool) bool {
	var stmts []string
	for _, l := range lines {
		stmts = append(stmts, strings.Split(l, ";")...)
	}
	for _, l := range stmts {
		if m := fromImport.FindStringSubmatch(l); m != nil && !strings.HasPrefix(m[1], ".") && pkgs[topLevel(m[1])] {
			return true
		}
		if m := importStmt.FindStringSubmatch(l); m != nil {
			for _, part := range strings.Split(m[1], ",") {
				if f := strings.Fields(part); len(f) > 0 && pkgs[topLevel(f[0])] {
					return true
				}
			}
		}
		for _, m := range dynamicImport.FindAllStringSubmatch(l, -1) {
			if pkgs[topLevel(m[2])] {
				return true
			}
		}
	}
	return false
}
