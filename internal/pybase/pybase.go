// Package pybase names the Pythons the base images offer. A base image is
// one Debian suite's root file system, so its Python is that suite's
// python3; a repository picks its base by naming the Python its tests
// need (featbench.toml's collect.repo.python, dataset.toml's
// [repositories.environment] python).
//
// It is a leaf package so that config and bench can check the versions
// they read without depending on the Docker client internal/images uses.
package pybase

import (
	"fmt"
	"strings"
)

// Base is one Python and the Debian suite whose python3 it is.
type Base struct {
	Python string // "3.13"
	Suite  string // "trixie"
	// Note says what sets the base apart, for error messages.
	Note string
}

// Default is the Python of a repository that names none: the base every
// dataset collected before the choice existed was graded on.
const Default = "3.11"

// All returns the bases, oldest Python first. A new one needs only a line
// here: debootstrap builds any suite it knows.
func All() []Base {
	return []Base{
		{Python: "3.11", Suite: "bookworm", Note: "setuptools 66"},
		// setuptools 78 reads PEP 639 metadata (license = "MIT"), which
		// bookworm's setuptools 66 refuses to install.
		{Python: "3.13", Suite: "trixie", Note: "setuptools 78, PEP 639 licenses"},
	}
}

// Lookup returns the base of a Python version ("" is Default); false when
// no base has it.
func Lookup(python string) (Base, bool) {
	if python == "" {
		python = Default
	}
	for _, b := range All() {
		if b.Python == python {
			return b, true
		}
	}
	return Base{}, false
}

// Supported lists the versions for an error message:
// `"3.11" (Debian bookworm, setuptools 66) or "3.13" (…)`.
func Supported() string {
	var parts []string
	for _, b := range All() {
		parts = append(parts, fmt.Sprintf("%q (Debian %s, %s)", b.Python, b.Suite, b.Note))
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// Check says why python cannot name a base image, or "" when it can.
func Check(python string) string {
	if _, ok := Lookup(python); ok {
		return ""
	}
	return fmt.Sprintf("is %q; the base images have Python %s", python, Supported())
}
