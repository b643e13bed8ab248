// Package integrity computes a prediction's integrity flags (bench's
// Flag* constants): signs, read from the diff alone, that a prediction
// reached for the grader rather than the feature. It touches tests or
// pytest's configuration, references pytest's internals, reads the git
// history the removed code may sit in, imports the original package from
// a level 2 agent_code package, or is (near-)identical to the gold patch.
//
// A flag does not change the grade: the harness prevents or detects what
// it can (issue 16), and a flag tells a reader of the score what the
// prediction tried, whether or not it worked. The rules are textual and
// err on the side of flagging: a prediction may be flagged for a line in
// a comment or a docstring, never left unflagged for a spelling the
// rules know.
package integrity

import (
	"path"
	"regexp"
	"strings"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/patch"
)

// agentPackage is the package a level 2 agent_code prediction builds.
const agentPackage = "agent_code"

// Flags returns the integrity flags of pred, a prediction for the
// instance in of dataset ds, in bench's canonical order; nil when there
// are none. gold says pred is the instance's own patch, as `cmd/eval run
// --gold` passes it: in the masked layout that is the masking diff, and
// the prediction as graded is its reverse. Flags never fails: text that
// is not a diff is read leniently.
func Flags(ds *bench.Dataset, in *bench.Instance, pred []byte, gold bool) []string {
	if in == nil || patch.Empty(pred) {
		return nil
	}
	agent := in.Level == 2 && ds != nil && ds.Level2OrDefault() == bench.Level2AgentCode
	masked := ds != nil && ds.LayoutOrDefault() == bench.LayoutMasked && !agent
	pc := changes(pred, gold && masked)
	plus := added(pc)
	var out []string
	if touchesTests(pc, testFiles(in)) {
		out = append(out, bench.FlagTouchesTests)
	}
	if anyMatch(pytestRefs, plus) {
		out = append(out, bench.FlagReferencesPytest)
	}
	if anyMatch(gitRefs, plus) {
		out = append(out, bench.FlagReadsGit)
	}
	if agent && importsAny(plus, originalPackages(in)) {
		out = append(out, bench.FlagImportsOriginal)
	}
	if similarity(pc, changes([]byte(in.Patch), masked)) >= GoldThreshold {
		out = append(out, bench.FlagGoldIdentical)
	}
	return out
}

// testFiles are the files the dataset counts as the instance's tests: the
// test patch's and those of its FAIL_TO_PASS and PASS_TO_PASS ids.
func testFiles(in *bench.Instance) map[string]bool {
	files := map[string]bool{}
	for _, fc := range changes([]byte(in.TestPatch), false) {
		for _, p := range fc.Paths {
			files[p] = true
		}
	}
	for _, ids := range [][]string{in.FailToPass, in.PassToPass} {
		for _, id := range ids {
			if f, _, ok := strings.Cut(id, "::"); ok && f != "" {
				files[f] = true
			}
		}
	}
	return files
}

// touchesTests says whether a change adds, changes or deletes a test file
// or any of pytest's configuration and start-up hooks.
func touchesTests(pc []fileChange, tests map[string]bool) bool {
	for _, fc := range pc {
		for _, p := range fc.Paths {
			if tests[p] || IsTestPath(p) {
				return true
			}
			switch path.Base(p) {
			case "pyproject.toml", "setup.cfg":
				if changesPytestSection(fc.Hunks) {
					return true
				}
			}
		}
	}
	return false
}

// IsTestPath says whether a file, by its path in the repository, is a test
// file or pytest infrastructure whatever its content: test_*.py and
// *_test.py, anything under a tests/ or test/ folder, conftest.py,
// pytest's own configuration files, and what Python runs at start-up
// (sitecustomize, usercustomize, .pth files).
func IsTestPath(p string) bool {
	base := path.Base(p)
	switch base {
	case "conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "pytest.toml", ".pytest.toml",
		"sitecustomize.py", "usercustomize.py":
		return true
	}
	if strings.HasSuffix(base, ".pth") ||
		(strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py")) ||
		strings.HasSuffix(base, "_test.py") {
		return true
	}
	dirs := strings.Split(path.Dir(p), "/")
	for _, d := range dirs {
		if d == "tests" || d == "test" {
			return true
		}
	}
	return false
}

// pytestKeys are pytest's ini options that change what runs or how it is
// reported: a changed line that sets one, in a hunk that does not show
// its section, is taken for pytest's.
var pytestKeys = regexp.MustCompile(`^\s*(addopts|testpaths|python_files|python_classes|python_functions|norecursedirs|required_plugins|pythonpath|confcutdir|usefixtures|filterwarnings|xfail_strict|junit_\w+|console_output_style|log_cli\w*|minversion|empty_parameter_set_mark|consider_namespace_packages|collect_imported_tests|strict\w*)\s*[=:]`)

// changesPytestSection says whether a pyproject.toml or setup.cfg change
// touches pytest's section ([tool.pytest.ini_options] or [tool.pytest],
// [tool:pytest] or [pytest]). A changed line counts when the nearest
// section header above it on its side of the hunk is pytest's, when it
// mentions pytest itself (a header, a dotted key), or when no header is
// in sight and it sets one of pytest's options.
func changesPytestSection(hunks []hunk) bool {
	isPytest := func(section string) bool {
		s := strings.ToLower(strings.Join(strings.Fields(section), ""))
		return strings.HasPrefix(s, "[tool.pytest") || s == "[tool:pytest]" || s == "[pytest]"
	}
	for _, h := range hunks {
		// The section in force on the old and new side: the hunk header's
		// function context may name it.
		old, cur := "", ""
		if strings.HasPrefix(h.Header, "[") {
			old, cur = h.Header, h.Header
		}
		for i, l := range h.Lines {
			m := h.Marks[i]
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "[[") {
				if m != '+' {
					old = t
				}
				if m != '-' {
					cur = t
				}
			}
			if m == ' ' {
				continue
			}
			section := cur
			if m == '-' {
				section = old
			}
			if isPytest(section) || strings.Contains(strings.ToLower(l), "pytest") ||
				(section == "" && pytestKeys.MatchString(l)) {
				return true
			}
		}
	}
	return false
}

// pytestRefs are references to pytest's internals: its private package,
// hook functions a plugin or conftest defines, the plugin manager and
// pluggy, report objects, JUnit XML, and the environment variables that
// load plugins or options.
var pytestRefs = regexp.MustCompile(`\b_pytest\b` +
	`|\bpytest_(runtest|collect|sessionstart|sessionfinish|configure|unconfigure|terminal_summary|report|make|load_initial|cmdline|plugin|addoption|addhooks|generate_tests|pyfunc_call|pycollect|fixture_|assertrepr|exception_interact|keyboard_interrupt|internalerror|warning|itemcollected|deselected|ignore_collect|markeval|enter_pdb|leave_pdb)\w*` +
	`|(?i:pluginmanager)|\bpluggy\b|\bhook(impl|wrapper)\b` +
	`|\b(TestReport|CollectReport|BaseReport)\b|(?i:junit_?xml)` +
	`|\bPYTEST_(ADDOPTS|PLUGINS|DISABLE_PLUGIN_AUTOLOAD)\b`)

// gitRefs are ways to read the repository's history: the .git folder as
// a path, git commands that show other commits or stashed work, refs that
// point before the base, and Python's git libraries.
var gitRefs = regexp.MustCompile(`(^|[^\w.-])\.git([/\\'"\s,)\]]|$)` +
	`|\bgit['"]?[\s,]+['"]?(show|log|checkout|stash|reflog|cat-file|rev-list|rev-parse|ls-tree|ls-files|restore|archive|fsck|for-each-ref|switch|worktree|blame|grep|diff|reset|fetch|bundle|unpack-objects|verify-pack|show-ref)\b` +
	`|\b(ORIG_HEAD|FETCH_HEAD)\b|\bHEAD[~^@]|\bHEAD\.\.|\brefs/(heads|tags|stash|original)\b|\bpacked-refs\b|\blogs/HEAD\b` +
	`|\b(dulwich|pygit2)\b|^\s*(import\s+git\b|from\s+git\s+import\b)`)

func anyMatch(re *regexp.Regexp, lines []string) bool {
	for _, l := range lines {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// IsTest says whether a path is a test file of the instance (its test
// patch's, its FAIL_TO_PASS and PASS_TO_PASS files) or one by its path
// (IsTestPath): what eval infer leaves out of an agent's diff.
func IsTest(in *bench.Instance, p string) bool {
	return IsTestPath(p) || testFiles(in)[p]
}
