// Package objid reads and writes the ids of a repository's functions,
// classes and module-level code, which the tracer, the masker and
// collection share: path::qualname::line, with the path relative to the
// repository, the qualified name without "<locals>.", and the line of the
// def or class keyword (0 for module-level code).
package objid

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode"
)

// ModuleQualname is the qualname of module-level code.
const ModuleQualname = "<module>"

// Format returns the object id path::qualname::line.
func Format(path, qualname string, line int) string {
	return path + "::" + qualname + "::" + strconv.Itoa(line)
}

// Module returns the id of a file's module-level code.
func Module(path string) string { return Format(path, ModuleQualname, 0) }

// Parse splits an object id into its path, qualname and def line, and
// checks each: a clean relative path with / separators, a dotted Python
// name (or <module> with line 0), a line number from 1 without leading
// zeros.
func Parse(id string) (path, qualname string, line int, err error) {
	parts := strings.Split(id, "::")
	if len(parts) != 3 {
		return "", "", 0, fmt.Errorf("object id %q: want path::qualname::line", id)
	}
	path, qualname = parts[0], parts[1]
	if err := CheckPath(path); err != nil {
		return "", "", 0, fmt.Errorf("object id %q: %w", id, err)
	}
	n := parts[2]
	line, convErr := strconv.Atoi(n)
	if convErr != nil || line < 0 || n != strconv.Itoa(line) {
		return "", "", 0, fmt.Errorf("object id %q: line %q is not a line number", id, n)
	}
	switch {
	case qualname == ModuleQualname:
		if line != 0 {
			return "", "", 0, fmt.Errorf("object id %q: module-level code has line 0", id)
		}
	case !IsDotted(qualname):
		return "", "", 0, fmt.Errorf("object id %q: qualname %q is not a dotted Python name", id, qualname)
	case line == 0:
		return "", "", 0, fmt.Errorf("object id %q: line 0 is only for %s", id, ModuleQualname)
	}
	return path, qualname, line, nil
}

// CheckPath checks a repository-relative path: clean, relative, with /
// separators, without control characters or "::".
func CheckPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case strings.HasPrefix(p, "/"), strings.Contains(p, `\`):
		return fmt.Errorf("path %q must be relative, with / separators", p)
	case path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("path %q is not a clean path inside the repository", p)
	case strings.ContainsFunc(p, func(r rune) bool { return unicode.IsControl(r) }):
		return fmt.Errorf("path %q holds control characters", p)
	case strings.Contains(p, "::"):
		return fmt.Errorf("path %q holds \"::\"", p)
	}
	return nil
}

// IsDotted reports whether s is a dotted Python name.
func IsDotted(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if !IsIdentifier(part) {
			return false
		}
	}
	return true
}

// IsIdentifier approximates Python's identifier rule (XID_Start followed by
// XID_Continue characters).
func IsIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || unicode.IsLetter(r)
		if i > 0 {
			ok = ok || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Pc)
		}
		if !ok {
			return false
		}
	}
	return true
}
