// Package pylock is the lock of a repository's environment: the Python
// packages its install steps took from a package index, each pinned by
// name, version and the sha256 of the file installed, so that the same
// dataset gives the same environment later. It reads `pip freeze`, writes
// the lock as a requirements file pip installs with --require-hashes, and
// compares two environments.
package pylock

import (
	"bufio"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/featbench/featbench/internal/pyindex"
)

// Package is one pinned package.
type Package struct {
	Name    string `toml:"name" json:"name"`       // PEP 503-normalized
	Version string `toml:"version" json:"version"` // as pip freeze gives it
	// Hashes are "sha256:HEX" of the files the index served for this
	// version and pip installed; empty when it came from elsewhere (then
	// only its name and version are checked).
	Hashes []string `toml:"hashes,omitempty" json:"hashes,omitempty"`
}

var (
	versionPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+!_-]*$`)
	hashPattern    = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// Check says what is wrong with a lock, one message per problem, each
// naming the entry ("lock[3].version") relative to the lock.
func Check(pkgs []Package) []string {
	var out []string
	seen := map[string]bool{}
	for i, p := range pkgs {
		key := fmt.Sprintf("lock[%d]", i)
		switch {
		case !pyindex.ValidName(p.Name) || pyindex.Normalize(p.Name) != p.Name:
			out = append(out, fmt.Sprintf("%s.name: %q is not a normalized package name", key, p.Name))
		case seen[p.Name]:
			out = append(out, fmt.Sprintf("%s.name: %q is pinned twice", key, p.Name))
		}
		seen[p.Name] = true
		if !versionPattern.MatchString(p.Version) {
			out = append(out, fmt.Sprintf("%s.version: %q is not a version", key, p.Version))
		}
		for j, h := range p.Hashes {
			if !hashPattern.MatchString(h) {
				out = append(out, fmt.Sprintf("%s.hashes[%d]: %q is not sha256:HEX (64 lower-case hex digits)", key, j, h))
			}
		}
	}
	return out
}

// Freeze is what `pip freeze` says of an environment: the packages pinned
// by name and version, and the lines it gives otherwise (editable
// installs, direct references such as the repository's own `name @
// file:///testbed`), which no index served.
type Freeze struct {
	Pinned []Package
	Other  []string
}

// ParseFreeze reads `pip freeze` output.
func ParseFreeze(text string) (Freeze, error) {
	var f Freeze
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, version, ok := strings.Cut(line, "==")
		if !ok || strings.HasPrefix(line, "-") || strings.Contains(line, " @ ") {
			f.Other = append(f.Other, line)
			continue
		}
		name, version = strings.TrimSpace(name), strings.TrimSpace(version)
		if !pyindex.ValidName(name) || !versionPattern.MatchString(version) {
			return Freeze{}, fmt.Errorf("pip freeze: %q is not name==version", line)
		}
		f.Pinned = append(f.Pinned, Package{Name: pyindex.Normalize(name), Version: version})
	}
	if err := sc.Err(); err != nil {
		return Freeze{}, fmt.Errorf("pip freeze: %w", err)
	}
	slices.SortFunc(f.Pinned, func(a, b Package) int { return strings.Compare(a.Name, b.Name) })
	return f, nil
}

// Requirements is the lock as a requirements file: `name==version
// --hash=sha256:...` for each package with hashes (pip installs them with
// --require-hashes --no-deps), in name order. Packages without hashes are
// left out: they come from the install steps again.
func Requirements(pkgs []Package) string {
	var b strings.Builder
	for _, p := range sorted(pkgs) {
		if len(p.Hashes) == 0 {
			continue
		}
		b.WriteString(p.Name + "==" + p.Version)
		for _, h := range p.Hashes {
			b.WriteString(" --hash=" + h)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Hashed says whether any package of the lock has hashes.
func Hashed(pkgs []Package) bool {
	return slices.ContainsFunc(pkgs, func(p Package) bool { return len(p.Hashes) > 0 })
}

// Diff lists how the environment got differs from the lock want by name
// and version, one line per package: "pluggy: 1.5.0 in the lock, 1.6.0
// installed", "iniconfig: in the lock, not installed", "extra: 1.0
// installed, not in the lock". Empty when they agree.
func Diff(want, got []Package) []string {
	g := map[string]string{}
	for _, p := range got {
		g[p.Name] = p.Version
	}
	var out []string
	w := map[string]bool{}
	for _, p := range sorted(want) {
		w[p.Name] = true
		v, ok := g[p.Name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: %s in the lock, not installed", p.Name, p.Version))
		case v != p.Version:
			out = append(out, fmt.Sprintf("%s: %s in the lock, %s installed", p.Name, p.Version, v))
		}
	}
	for _, p := range sorted(got) {
		if !w[p.Name] {
			out = append(out, fmt.Sprintf("%s: %s installed, not in the lock", p.Name, p.Version))
		}
	}
	return out
}

func sorted(pkgs []Package) []Package {
	out := slices.Clone(pkgs)
	slices.SortFunc(out, func(a, b Package) int { return strings.Compare(a.Name, b.Name) })
	return out
}
