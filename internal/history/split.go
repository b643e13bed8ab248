package history

import (
	"fmt"
	"strings"

	"github.com/featbench/featbench/internal/patch"
)

// Patches are a pull request's diff split by path: the code patch (the
// gold solution) and the test patch, each a diff `git apply` takes, and
// the sections of neither.
type Patches struct {
	Code string `json:"code"`
	Test string `json:"test"`
	// CodeFiles and TestFiles are the sections' paths (a deleted file's
	// old path), in diff order.
	CodeFiles []string `json:"code_files"`
	TestFiles []string `json:"test_files"`
	// Omitted are the sections left out of both: binary files, symbolic
	// links and submodules, which the harness refuses to apply, and
	// whatever else its patch check refuses.
	Omitted []Omission `json:"omitted,omitempty"`
	// Deleted are test files the test patch deletes; TestAdded counts the
	// lines the test patch adds to test files it keeps.
	Deleted   []string `json:"deleted_tests,omitempty"`
	TestAdded int      `json:"test_added"`
}

// Omission is a section of a diff left out, and why.
type Omission struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Split cuts a diff (Git.Diff's) into its file sections and sorts each
// into the test patch when isTest says its path is test code, else the
// code patch. Both patches then hold whole sections as git wrote them, so
// that test patch and code patch applied in either order give the diff's
// result for every file they hold. A section the evaluation harness would
// refuse to apply (internal/patch's Check: binary, symbolic link,
// submodule, a path it does not allow) goes to neither, and is listed.
func Split(diff []byte, isTest func(path string) bool) (Patches, error) {
	var out Patches
	if patch.Empty(diff) {
		return out, nil
	}
	p, err := patch.Parse(diff)
	if err != nil {
		return out, fmt.Errorf("reading the diff: %w", err)
	}
	lines := strings.SplitAfter(string(diff), "\n")
	var code, test strings.Builder
	for i, f := range p.Files {
		end := len(lines)
		if i+1 < len(p.Files) {
			end = p.Files[i+1].Line - 1
		}
		sec := strings.Join(lines[f.Line-1:end], "")
		if !strings.HasSuffix(sec, "\n") {
			sec += "\n"
		}
		path := f.Path()
		if why := refusal(f, sec); why != "" {
			out.Omitted = append(out.Omitted, Omission{Path: path, Reason: why})
			continue
		}
		if isTest(path) {
			test.WriteString(sec)
			out.TestFiles = append(out.TestFiles, path)
			if f.Deleted {
				out.Deleted = append(out.Deleted, path)
			} else if strings.HasSuffix(path, ".py") {
				out.TestAdded += f.Added
			}
			continue
		}
		code.WriteString(sec)
		out.CodeFiles = append(out.CodeFiles, path)
	}
	out.Code, out.Test = code.String(), test.String()
	return out, nil
}

// refusal is why a section cannot go into a patch the harness applies, or
// "".
func refusal(f patch.File, sec string) string {
	switch {
	case f.Binary:
		return "a binary file"
	case f.OldMode == "120000" || f.NewMode == "120000":
		return "a symbolic link"
	case f.OldMode == "160000" || f.NewMode == "160000":
		return "a submodule"
	}
	if err := patch.Check([]byte(sec), patch.Limits{}); err != nil {
		return OneLine(err.Error(), 200)
	}
	return ""
}

// PythonFiles lists the .py files among paths.
func PythonFiles(paths []string) []string {
	var out []string
	for _, p := range paths {
		if strings.HasSuffix(p, ".py") {
			out = append(out, p)
		}
	}
	return out
}
