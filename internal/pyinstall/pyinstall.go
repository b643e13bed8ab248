// Package pyinstall installs a level 2 prediction's Python package into a
// folder as the statement announces it (`pip install --no-index --no-deps
// --no-build-isolation`), with a fast path that gives pip's result without
// pip's start-up when it is sure of it, and pip itself otherwise
// (install.py says which cases are which).
package pyinstall

import (
	_ "embed"
	"strings"
)

//go:embed install.py
var source string

// File is the name the fast installer is copied into a container under.
const File = "featbench_install.py"

// Source returns the fast installer's Python source.
func Source() []byte { return []byte(source) }

// PipArgs is pip's install of the package in src into target: the one the
// statement announces, into a folder of its own, without the bytecode pip
// would compile after the install (the tests compile what they import).
func PipArgs(src, target string) []string {
	return []string{"pip", "install", "--no-index", "--no-deps", "--no-build-isolation", "--no-cache-dir", "--no-compile", "--target", target, src}
}

// Argv is a command that installs the package in src into the empty
// folder target: the fast installer at installer (File, copied into the
// container), and when it declines or fails, pip into target emptied
// again, whose exit status is then the command's. Run it as the user the
// install runs as: the package's build is its code.
func Argv(installer, src, target string) []string {
	return ArgvPython("python3", installer, src, target)
}

// ArgvPython is Argv with the interpreter python (an absolute path, or
// "python3" from $PATH): the environment's, whose pip is then run as
// "python -m pip".
func ArgvPython(python, installer, src, target string) []string {
	args := PipArgs(`"$2"`, `"$3"`)
	py := "python3"
	if python != "python3" && python != "" {
		py = `"$4"`
		args = append([]string{py, "-m"}, args...)
	}
	pip := strings.Join(args, " ")
	script := py + ` -I "$1" "$2" "$3" || { find "$3" -mindepth 1 -delete && ` + pip + `; }`
	argv := []string{"sh", "-c", script, "sh", installer, src, target}
	if py != "python3" {
		argv = append(argv, python)
	}
	return argv
}
