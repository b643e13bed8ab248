package pytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// loadCaptured reads a captured run (see capture_test.go) as Parse's input.
func loadCaptured(t *testing.T, name string, expected ...string) Input {
	t.Helper()
	dir := filepath.Join(capturedDir, name)
	read := func(file string, required bool) []byte {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil && (required || !os.IsNotExist(err)) {
			t.Fatal(err)
		}
		return b
	}
	var meta captureMeta
	if err := json.Unmarshal(read("meta.json", true), &meta); err != nil {
		t.Fatal(err)
	}
	return Input{
		JUnitXML: read("junit.xml", false),
		JSONL:    read("report.jsonl", false),
		Stdout:   read("stdout.txt", true),
		Stderr:   read("stderr.txt", true),
		ExitCode: meta.ExitCode,
		TimedOut: meta.TimedOut,
		Expected: expected,
	}
}

func mustParse(t *testing.T, in Input) *Report {
	t.Helper()
	r, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// want is an expected outcome: status and exception type, and a piece of
// the message when set.
type want struct {
	status  Status
	exc     string
	message string
}

func checkOutcomes(t *testing.T, r *Report, wants map[string]want) {
	t.Helper()
	if len(r.Outcomes) != len(wants) {
		t.Errorf("%d outcomes, want %d", len(r.Outcomes), len(wants))
	}
	for id, w := range wants {
		o, ok := r.Outcome(id)
		if !ok {
			t.Errorf("%s: no outcome", id)
			continue
		}
		if o.Status != w.status || o.ExcType != w.exc {
			t.Errorf("%s: %s %q, want %s %q (message %q)", id, o.Status, o.ExcType, w.status, w.exc, o.Message)
		}
		if w.message != "" && !strings.Contains(o.Message, w.message) {
			t.Errorf("%s: message %q does not contain %q", id, o.Message, w.message)
		}
	}
}

func ids(wants map[string]want) []string {
	var out []string
	for id := range wants {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

const outcomesFile = "tests/test_outcomes.py"

func outcomesWants(plugin bool) map[string]want {
	f := outcomesFile + "::"
	xfailExc := func(exc string) string {
		if plugin {
			return exc
		}
		return "" // only the plugin records why an xfail failed
	}
	return map[string]want{
		f + "test_pass":                  {status: StatusPassed},
		f + "test_assert_fails":          {StatusFailed, "AssertionError", "assert [1, 2, 3] == [1, 2, 4]"},
		f + "test_assert_message":        {StatusFailed, "AssertionError", "the total is wrong"},
		f + "test_name_error":            {StatusFailed, "NameError", "undefined_name"},
		f + "test_attribute_error":       {StatusFailed, "AttributeError", "no_such_method"},
		f + "test_type_error":            {StatusFailed, "TypeError", "has no len()"},
		f + "test_raises_miss":           {StatusFailed, "Failed", "DID NOT RAISE"},
		f + "test_fail_call":             {StatusFailed, "Failed", "explicit failure"},
		f + "test_custom_exception":      {StatusFailed, "CustomError", "multi\nline message"},
		f + "test_skip_marker":           {StatusSkipped, "", "skipped by marker"},
		f + "test_skip_inline":           {StatusSkipped, "", "skipped inside the test"},
		f + "test_skipif":                {StatusSkipped, "", "always skipped by skipif"},
		f + "test_xfail":                 {StatusXFailed, xfailExc("AssertionError"), "known bug"},
		f + "test_xpass":                 {StatusXPassed, "", "known bug, fixed"},
		f + "test_xpass_strict":          {StatusFailed, "XPASS(strict)", "[XPASS(strict)] must fail"},
		f + "test_xfail_wrong_exception": {StatusFailed, "ValueError", "not a TypeError"},
		f + "test_xfail_not_run":         {StatusXFailed, xfailExc("XFailed"), "[NOTRUN] not run"},
		f + "test_xfail_inline":          {StatusXFailed, xfailExc("XFailed"), "xfailed inside the test"},
		f + "test_prints_and_passes":     {status: StatusPassed},
	}
}

const fixturesFile = "tests/test_fixtures.py"

func fixturesWants(plugin bool) map[string]want {
	f := fixturesFile + "::"
	lookup := ""
	if plugin {
		lookup = "FixtureLookupError"
	}
	return map[string]want{
		f + "test_setup_error":    {StatusError, "NameError", "name 'config' is not defined"},
		f + "test_teardown_error": {StatusError, "RuntimeError", "teardown went wrong"},
		// A call failure plus a teardown error: two testcases, the error wins.
		f + "test_call_and_teardown_fail":   {StatusError, "RuntimeError", "teardown went wrong"},
		f + "test_missing_fixture":          {StatusError, lookup, "fixture 'no_such_fixture' not found"},
		f + "test_setup_and_teardown_error": {StatusError, "NameError", "name 'config' is not defined"},
		f + "test_after_errors":             {status: StatusPassed},
		f + "TestClassFixture::test_method": {StatusError, "AttributeError", "'dict' object has no attribute 'missing'"},
	}
}

const idsFile = "tests/test_ids.py"

func idsWants() map[string]want {
	f := idsFile + "::"
	pass := want{status: StatusPassed}
	return map[string]want{
		f + "test_param[plain]":                                  pass,
		f + "test_param[with space]":                             pass,
		f + "test_param[a::b]":                                   pass,
		f + "test_param[path/to/file.py]":                        pass,
		f + "test_param[x - y]":                                  {StatusFailed, "AssertionError", "failure of the id with ' - '"},
		f + "test_param[br[ack]et]":                              pass,
		f + `test_param[caf\xe9]`:                                pass, // pytest escapes non-ASCII parameters
		f + `test_param[tab\there]`:                              pass,
		f + "test_param[a - b::c [d] / e]":                       pass,
		f + "test_explicit_ids[one - two]":                       pass,
		f + "test_explicit_ids[three [four]]":                    pass,
		f + "test_stacked[x y-1]":                                pass,
		f + "test_stacked[x y-2]":                                {StatusFailed, "AssertionError", "assert 2 == 1"},
		f + "test_crème":                                         pass, // but not a non-ASCII function name
		f + "TestOuter::test_method":                             pass,
		f + "TestOuter::test_param_method[p q]":                  pass,
		f + "TestOuter::test_param_method[r::s]":                 {StatusFailed, "AssertionError", "'::' is contained here"},
		f + "TestOuter::TestInner::test_nested":                  pass,
		f + "TestOuter::TestInner::test_nested_fails":            {StatusFailed, "AssertionError", "assert 1 == 2"},
		f + "TestOuter::TestInner::TestDeeper::test_deep[1 - 2]": pass,
	}
}

// TestParseCaptured checks every status and exception type of the
// captured runs, with and without the plugin.
func TestParseCaptured(t *testing.T) {
	collect := func(name, exc, msg string, tests ...string) (string, map[string]want) {
		w := map[string]want{}
		for _, tt := range tests {
			w["tests/collect/test_"+name+".py::"+tt] = want{StatusCollectionError, exc, msg}
		}
		return "collect_" + name, w
	}
	type tc struct {
		name  string
		wants map[string]want
	}
	cases := []tc{
		{"outcomes", outcomesWants(true)},
		{"outcomes_noplugin", outcomesWants(false)},
		{"fixtures", fixturesWants(true)},
		{"fixtures_noplugin", fixturesWants(false)},
		{"ids", idsWants()},
		{"ids_noplugin", idsWants()},
		{"timeout", map[string]want{
			"tests/test_timeout.py::test_before": {status: StatusPassed},
			"tests/test_timeout.py::test_sleeps": {StatusTimeout, "Timeout", "Timeout >1.0s"},
			"tests/test_timeout.py::test_after":  {status: StatusPassed},
		}},
		{"passing_with_skips", map[string]want{
			"tests/test_passing_with_skips.py::test_passes":  {status: StatusPassed},
			"tests/test_passing_with_skips.py::test_skipped": {StatusSkipped, "", "not on this platform"},
			"tests/test_passing_with_skips.py::test_xfails":  {StatusXFailed, "AssertionError", "known bug"},
		}},
		{"conftest_error", map[string]want{
			"tests/broken/test_broken.py::test_never_runs": {StatusCollectionError, "ModuleNotFoundError", "No module named 'no_such_module_in_conftest'"},
		}},
	}
	for _, c := range [][4]string{
		{"nameerror", "NameError", "name 'undefined_at_import' is not defined", "test_never_runs test_never_runs_either"},
		{"attributeerror", "AttributeError", "has no attribute 'no_such_attribute'", "test_never_runs"},
		{"typeerror", "TypeError", "has no len()", "test_never_runs"},
		{"importerror", "ImportError", "cannot import name 'no_such_name'", "test_never_runs"},
		{"modulenotfound", "ModuleNotFoundError", "No module named 'no_such_module_featbench'", "test_never_runs"},
		{"syntaxerror", "SyntaxError", "invalid syntax", "test_never_runs"},
		// A parametrize mistake fails the collection of the whole module.
		{"badparam", "Failed", "function uses no argument 'x'", "test_bad_param test_fine"},
	} {
		name, w := collect(c[0], c[1], c[2], strings.Fields(c[3])...)
		cases = append(cases, tc{name, w})
	}
	cases = append(cases, tc{"collect_moduleskip", map[string]want{
		"tests/collect/test_moduleskip.py::test_never_runs": {StatusSkipped, "", "needs a GPU"},
	}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustParse(t, loadCaptured(t, c.name, ids(c.wants)...))
			checkOutcomes(t, r, c.wants)
			if len(r.Unexpected) > 0 {
				t.Errorf("unexpected tests %q", r.Unexpected)
			}
			if len(r.Disagreements) > 0 {
				t.Errorf("disagreements %+v", r.Disagreements)
			}
			if c.name != "conftest_error" && (!r.Finished || r.Seconds <= 0) {
				t.Errorf("finished %v in %vs, want a finished run with pytest's duration", r.Finished, r.Seconds)
			}
			for _, n := range r.Notes {
				if strings.Contains(n, "exit status") {
					t.Errorf("note %q: the exit status fits the results", n)
				}
			}
		})
	}
}

func TestParseCapturedCounts(t *testing.T) {
	r := mustParse(t, loadCaptured(t, "outcomes", outcomesFile))
	wantCounts := map[string]int{"failed": 10, "passed": 2, "skipped": 3, "xfailed": 3, "xpassed": 1}
	if !mapsEqual(r.Counts, wantCounts) {
		t.Errorf("counts %v, want %v", r.Counts, wantCounts)
	}
	j := r.JUnit
	if !j.Present || !j.Complete || j.Tests != 19 || j.Failures != 10 || j.Errors != 0 || j.Skipped != 6 || j.Seconds != r.Seconds {
		t.Errorf("junit %+v, seconds %v", j, r.Seconds)
	}
	if r.Pytest != "7.2.1" || !slices.Equal(r.Sources, []string{"junit"}) {
		t.Errorf("pytest %q, sources %q", r.Pytest, r.Sources)
	}
	if len(r.Tests) != 19 {
		t.Errorf("%d tests, want 19", len(r.Tests))
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestParseWithoutPluginNames checks that every test of a run without the
// plugin gets its node id back: from the expected ids by forward mangling,
// else from the -rA summary; only skipped tests, which the summary folds,
// stay under JUnit's classname::name.
func TestParseWithoutPluginNames(t *testing.T) {
	for _, c := range []struct {
		name, file string
		all        []string
		unnamed    []string
	}{
		{"ids_noplugin", idsFile, ids(idsWants()), nil},
		{"outcomes_noplugin", outcomesFile, ids(outcomesWants(false)), []string{
			"tests.test_outcomes::test_skip_marker", "tests.test_outcomes::test_skip_inline", "tests.test_outcomes::test_skipif"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mustParse(t, loadCaptured(t, c.name, c.file))
			var got []string
			for _, o := range r.Tests {
				got = append(got, o.ID)
			}
			wantIDs := slices.Clone(c.all)
			for _, u := range c.unnamed {
				_, name, _ := strings.Cut(u, "::")
				wantIDs = slices.DeleteFunc(wantIDs, func(s string) bool { return s == c.file+"::"+name })
				wantIDs = append(wantIDs, u)
			}
			slices.Sort(got)
			slices.Sort(wantIDs)
			if !slices.Equal(got, wantIDs) {
				t.Errorf("test ids\n got %q\nwant %q", got, wantIDs)
			}
			if len(r.Disagreements) > 0 {
				t.Errorf("disagreements %+v", r.Disagreements)
			}
		})
	}
}

// TestParseFiles checks ids that are whole test files, as FeatureBench's
// datasets give them.
func TestParseFiles(t *testing.T) {
	for _, c := range []struct {
		name, file string
		want       want
		tests      int
	}{
		{"outcomes", outcomesFile, want{StatusFailed, "AssertionError", "test_assert_fails: assert"}, 19},
		{"fixtures", fixturesFile, want{StatusError, "NameError", "test_setup_error: NameError"}, 7},
		{"ids", idsFile, want{StatusFailed, "AssertionError", "test_param[x - y]: "}, 20},
		{"ids_noplugin", idsFile, want{StatusFailed, "AssertionError", "test_param[x - y]: "}, 20},
		{"passing_with_skips", "tests/test_passing_with_skips.py", want{status: StatusPassed}, 3},
		{"timeout", "tests/test_timeout.py", want{StatusTimeout, "Timeout", "test_sleeps"}, 3},
		{"killed", "tests/test_killed.py", want{StatusTimeout, "", "timed out while tests/test_killed.py::test_hangs ran"}, 2},
		{"crash", "tests/test_crash.py", want{StatusMissing, "", "pytest died while tests/test_crash.py::test_exits_process ran (exit 3)"}, 1},
		{"collect_nameerror", "tests/collect/test_nameerror.py", want{StatusCollectionError, "NameError", "undefined_at_import"}, 0},
		{"collect_moduleskip", "tests/collect/test_moduleskip.py", want{StatusSkipped, "", "needs a GPU"}, 0},
		{"conftest_error", "tests/broken/test_broken.py", want{StatusCollectionError, "ModuleNotFoundError", "while loading conftest"}, 0},
		{"ids_positional_notfound", idsFile, want{StatusMissing, "", "ERROR: not found"}, 0},
		{"textkit_dates", "tests/test_dates.py", want{status: StatusPassed}, 17},
		{"textkit_base_dates", "tests/test_dates.py", want{StatusFailed, "AttributeError", "test_format_duration[0.7-0 seconds]: AttributeError"}, 17},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mustParse(t, loadCaptured(t, c.name, c.file))
			checkOutcomes(t, r, map[string]want{c.file: c.want})
			if o := r.Outcomes[0]; o.Tests != c.tests {
				t.Errorf("%d tests, want %d", o.Tests, c.tests)
			}
			if len(r.Unexpected) > 0 {
				t.Errorf("unexpected %q", r.Unexpected)
			}
		})
	}
}

// TestParseClassGroup checks an id naming a class: its tests, nested ones
// included.
func TestParseClassGroup(t *testing.T) {
	r := mustParse(t, loadCaptured(t, "ids", idsFile+"::TestOuter::TestInner", idsFile+"::TestOuter::TestInner::TestDeeper"))
	checkOutcomes(t, r, map[string]want{
		idsFile + "::TestOuter::TestInner":             {StatusFailed, "AssertionError", "test_nested_fails: assert 1 == 2"},
		idsFile + "::TestOuter::TestInner::TestDeeper": {status: StatusPassed},
	})
	if r.Outcomes[0].Tests != 3 || r.Outcomes[1].Tests != 1 {
		t.Errorf("tests %d, %d; want 3, 1", r.Outcomes[0].Tests, r.Outcomes[1].Tests)
	}
}

func TestParseKilled(t *testing.T) {
	f := "tests/test_killed.py::"
	r := mustParse(t, loadCaptured(t, "killed", f+"test_first", f+"test_second_fails", f+"test_hangs", f+"test_never_reached"))
	checkOutcomes(t, r, map[string]want{
		f + "test_first":         {status: StatusPassed},
		f + "test_second_fails":  {StatusFailed, "AssertionError", "assert 1 == 2"},
		f + "test_hangs":         {StatusTimeout, "", "the run timed out while this test ran"},
		f + "test_never_reached": {StatusTimeout, "", "the run timed out before this test reported"},
	})
	if r.Finished || !r.TimedOut || r.ExitCode != 137 || r.JUnit.Present || !slices.Equal(r.Sources, []string{"jsonl"}) {
		t.Errorf("finished %v, timed out %v, exit %d, junit %+v, sources %q", r.Finished, r.TimedOut, r.ExitCode, r.JUnit, r.Sources)
	}
	if FailureMode(r.Outcomes[2]) != "Timeout" {
		t.Errorf("failure mode %q", FailureMode(r.Outcomes[2]))
	}
}

func TestParseCrash(t *testing.T) {
	f := "tests/test_crash.py::"
	r := mustParse(t, loadCaptured(t, "crash", f+"test_ok", f+"test_exits_process", f+"test_never_reached"))
	checkOutcomes(t, r, map[string]want{
		f + "test_ok":            {status: StatusPassed},
		f + "test_exits_process": {StatusMissing, "", "pytest died while this test ran (exit 3)"},
		f + "test_never_reached": {StatusMissing, "", "pytest died before this test reported (exit 3)"},
	})
	if r.Finished || !hasNote(r, "did not finish its session") {
		t.Errorf("finished %v, notes %q", r.Finished, r.Notes)
	}
}

func hasNote(r *Report, part string) bool {
	return slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, part) })
}

func TestParseSelected(t *testing.T) {
	f := idsFile + "::"
	r := mustParse(t, loadCaptured(t, "ids_selected",
		f+"test_param[a::b]", f+"test_param[x - y]", f+"TestOuter::TestInner::test_nested", f+"test_gone"))
	checkOutcomes(t, r, map[string]want{
		f + "test_param[a::b]":                  {status: StatusPassed},
		f + "test_param[x - y]":                 {StatusFailed, "AssertionError", "failure of the id"},
		f + "TestOuter::TestInner::test_nested": {status: StatusPassed},
		f + "test_gone":                         {StatusMissing, "", "not reported by pytest"},
	})
	if r.Counts["deselected"] != 17 {
		t.Errorf("counts %v, want 17 deselected", r.Counts)
	}
}

func TestParsePositionalNotFound(t *testing.T) {
	f := idsFile + "::"
	r := mustParse(t, loadCaptured(t, "ids_positional_notfound", f+"test_gone", f+"test_param[a::b]"))
	checkOutcomes(t, r, map[string]want{
		f + "test_gone":        {StatusMissing, "", "pytest ran no tests (exit 4): ERROR: not found:"},
		f + "test_param[a::b]": {StatusMissing, "", "pytest ran no tests (exit 4)"},
	})
}

// TestParseUnexpected: tests that ran but were not asked for are listed.
func TestParseUnexpected(t *testing.T) {
	const f = "tests/test_dates.py::"
	asked := []string{f + "test_natural_day", f + "test_format_date"}
	r := mustParse(t, loadCaptured(t, "textkit_base_dates", asked...))
	// The file's other 15 tests, in the order they ran.
	if n := len(r.Unexpected); n != 15 || r.Unexpected[0] != f+"test_format_duration[0.7-0 seconds]" || r.Unexpected[n-1] != f+"test_natural_delta" {
		t.Errorf("unexpected %q, want the file's 15 other tests from test_format_duration[0.7-0 seconds] to test_natural_delta", r.Unexpected)
	}
	for _, id := range asked {
		if slices.Contains(r.Unexpected, id) {
			t.Errorf("%s was asked for, and listed as unexpected", id)
		}
	}
}

// TestParseTruncatedXML cuts the XML (as a kill while pytest writes it
// would) and checks that the stream and the summary make up for it.
func TestParseTruncatedXML(t *testing.T) {
	for _, name := range []string{"outcomes", "fixtures", "ids"} {
		wants := map[string]map[string]want{"outcomes": outcomesWants(true), "fixtures": fixturesWants(true), "ids": idsWants()}[name]
		full := loadCaptured(t, name, ids(wants)...)
		for _, frac := range []float64{0, 0.1, 0.5, 0.9, 0.999} {
			in := full
			in.JUnitXML = full.JUnitXML[:int(frac*float64(len(full.JUnitXML)))]
			r := mustParse(t, in)
			checkOutcomes(t, r, wants)
			if frac > 0 && (!hasNote(r, "JUnit XML unreadable") || r.JUnit.Complete) {
				t.Errorf("%s cut at %v: notes %q, junit %+v", name, frac, r.Notes, r.JUnit)
			}
			// Without the stream, the summary gives every test it has a
			// line for; skipped tests, which it only counts, are matched
			// by that count.
			in.JSONL = nil
			r = mustParse(t, in)
			for id, w := range wants {
				o, _ := r.Outcome(id)
				if o.Status != w.status {
					t.Errorf("%s cut at %v, no stream: %s is %s, want %s", name, frac, id, o.Status, w.status)
				}
			}
		}
	}
}

// TestParseSummaryOnly parses output alone, as for a log of a run without
// --junitxml: ids with " - ", spaces, "::" and brackets must come back whole.
func TestParseSummaryOnly(t *testing.T) {
	for _, c := range []struct {
		name  string
		wants map[string]want
	}{
		{"ids", idsWants()},
		{"outcomes", outcomesWants(true)},
		{"fixtures", fixturesWants(true)},
		{"timeout", map[string]want{
			"tests/test_timeout.py::test_before": {status: StatusPassed},
			"tests/test_timeout.py::test_sleeps": {StatusTimeout, "Timeout", "Timeout >1.0s"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := loadCaptured(t, c.name, ids(c.wants)...)
			in.JUnitXML, in.JSONL = nil, nil
			r := mustParse(t, in)
			for id, w := range c.wants {
				o, _ := r.Outcome(id)
				if o.Status != w.status {
					t.Errorf("%s: %s, want %s (%q)", id, o.Status, w.status, o.Message)
				}
				// The summary's message is the exception's: the type is
				// there unless pytest printed none (an xfail's reason, a
				// fixture lookup, a bare assert).
				if o.ExcType != "" && o.ExcType != w.exc {
					t.Errorf("%s: exception %q, want %q", id, o.ExcType, w.exc)
				}
			}
			if !slices.Equal(r.Sources, []string{"summary"}) {
				t.Errorf("sources %q", r.Sources)
			}
			// Only the file id given: unknown ids are cut by brackets.
			in.Expected = []string{strings.SplitN(ids(c.wants)[0], "::", 2)[0]}
			r = mustParse(t, in)
			var got []string
			for _, o := range r.Tests {
				got = append(got, o.ID)
			}
			for id, w := range c.wants {
				if w.status != StatusSkipped && !slices.Contains(got, id) {
					t.Errorf("summary gave no test %q; got %q", id, got)
				}
			}
		})
	}
}

// TestParseTextkit runs the example dataset's ids against the captured runs
// of examples/textkit: on the complete project every F2P and P2P id must be
// reported under exactly that id, and pass; on an instance's base its F2P
// tests fail the way the example results say.
func TestParseTextkit(t *testing.T) {
	byFile := map[string][]string{}
	for _, inst := range exampleInstances(t) {
		for _, id := range append(slices.Clone(inst.F2P), inst.P2P...) {
			path, _, _ := strings.Cut(id, "::")
			if !slices.Contains(byFile[path], id) {
				byFile[path] = append(byFile[path], id)
			}
		}
	}
	for _, f := range textkitFiles() {
		path := "tests/test_" + f + ".py"
		expected := byFile[path]
		if len(expected) == 0 {
			t.Fatalf("the dataset has no test in %s", path)
		}
		r := mustParse(t, loadCaptured(t, "textkit_"+f, expected...))
		for _, o := range r.Outcomes {
			if o.Status != StatusPassed {
				t.Errorf("%s: %s %q", o.ID, o.Status, o.Message)
			}
		}
		if len(r.Unexpected) > 0 || len(r.Disagreements) > 0 {
			t.Errorf("%s: tests not in the dataset %q, disagreements %+v", path, r.Unexpected, r.Disagreements)
		}
	}
	for _, b := range []struct {
		name, instance, mode string
		status               Status
	}{
		{"case", "featbench__textkit.test_case.3f4c65e3.lv1", "ImportError", StatusCollectionError},
		{"dates", "featbench__textkit.test_dates.4a59211b.lv1", "AttributeError", StatusFailed},
		{"fuzzy", "featbench__textkit.test_fuzzy.3ef8640e.lv1", "NameError", StatusCollectionError},
	} {
		inst := exampleInstance(t, b.instance)
		path, _, _ := strings.Cut(inst.F2P[0], "::")
		expected := byFile[path]
		// The masked code base may pass some F2P tests (up to the
		// collection's ceiling): those the shipped empty run passed.
		passing := emptyPassed(t, b.instance)
		r := mustParse(t, loadCaptured(t, "textkit_base_"+b.name, expected...))
		for _, o := range r.Outcomes {
			if slices.Contains(passing, o.ID) {
				if o.Status != StatusPassed {
					t.Errorf("%s base, F2P %s: %s; the shipped empty run passed it", b.name, o.ID, o.Status)
				}
			} else if slices.Contains(inst.F2P, o.ID) {
				if o.Status != b.status || FailureMode(o) != b.mode || Passed(o.Status) {
					t.Errorf("%s base, F2P %s: %s, failure mode %q; want %s, %q", b.name, o.ID, o.Status, FailureMode(o), b.status, b.mode)
				}
			} else if !Maintained(o.Status) {
				t.Errorf("%s base, P2P %s: %s", b.name, o.ID, o.Status)
			}
		}
	}
}

// emptyPassed is the F2P tests of an instance that the shipped empty
// submission of the example passed.
func emptyPassed(t *testing.T, id string) []string {
	t.Helper()
	raw, err := os.ReadFile("../../data/submissions/example/v2/full/20261123_empty/results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var r struct {
			ID     string   `json:"instance_id"`
			Passed []string `json:"f2p_passed"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.ID == id {
			return r.Passed
		}
	}
	t.Fatalf("no result for %s in the example's empty submission", id)
	return nil
}

func TestParseNothing(t *testing.T) {
	r := mustParse(t, Input{ExitCode: 137, Expected: []string{"tests/test_a.py::test_x", "tests/test_b.py"}})
	checkOutcomes(t, r, map[string]want{
		"tests/test_a.py::test_x": {StatusMissing, "", "pytest left no results (exit 137)"},
		"tests/test_b.py":         {StatusMissing, "", "pytest left no results (exit 137)"},
	})
	r = mustParse(t, Input{ExitCode: 137, TimedOut: true, Expected: []string{"tests/test_a.py::test_x", "tests/test_b.py"}})
	checkOutcomes(t, r, map[string]want{
		"tests/test_a.py::test_x": {StatusTimeout, "", "the run timed out"},
		"tests/test_b.py":         {StatusTimeout, "", "the run timed out"},
	})
	if len(r.Sources) != 0 || r.Finished {
		t.Errorf("sources %q, finished %v", r.Sources, r.Finished)
	}
}

func TestParseBadExpected(t *testing.T) {
	for _, exp := range [][]string{{"a.py::t", "a.py::t"}, {""}, {" "}} {
		if _, err := Parse(Input{Expected: exp}); err == nil {
			t.Errorf("Parse accepted expected ids %q", exp)
		}
	}
}

// TestParseDisagreement edits a captured summary so that it contradicts
// the XML: the disagreement is recorded and JUnit's word kept.
func TestParseDisagreement(t *testing.T) {
	id := idsFile + "::test_param[with space]"
	in := loadCaptured(t, "ids", id, idsFile+"::test_stacked[x y-2]")
	in.Stdout = []byte(strings.Replace(string(in.Stdout), "PASSED "+id+"\n", "FAILED "+id+" - AssertionError: edited\n", 1))
	in.Stdout = []byte(strings.Replace(string(in.Stdout), "FAILED "+idsFile+"::test_stacked[x y-2] - assert 2 == 1\n", "", 1))
	r := mustParse(t, in)
	want := []Disagreement{
		{ID: id, JUnit: StatusPassed, Summary: StatusFailed},
		{ID: idsFile + "::test_stacked[x y-2]", JUnit: StatusFailed, Summary: ""},
	}
	if !slices.Equal(r.Disagreements, want) {
		t.Errorf("disagreements %+v, want %+v", r.Disagreements, want)
	}
	if o, _ := r.Outcome(id); o.Status != StatusPassed {
		t.Errorf("%s: %s, JUnit's passed should win", id, o.Status)
	}
}

func TestReportJSON(t *testing.T) {
	r := mustParse(t, loadCaptured(t, "timeout", "tests/test_timeout.py::test_sleeps"))
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{`"status":"timeout"`, `"exc_type":"Timeout"`, `"exit_code":1`, `"sources":["junit"]`} {
		if !strings.Contains(string(b), part) {
			t.Errorf("report JSON lacks %s: %s", part, b)
		}
	}
}

// TestParseOtherFilesCollectionError: with --continue-on-collection-errors
// one file's collection error does not speak for a test of another file
// that collected and ran: a test missing there is missing, not that
// file's ImportError (python-semver: test_docstrings' tests parametrized
// over the masked functions vanished from the masked codebase, and were
// reported as the fail-to-pass file's ImportError).
func TestParseOtherFilesCollectionError(t *testing.T) {
	out := `============================= test session starts ==============================
collected 1 item / 1 error

==================================== ERRORS ====================================
_______________________ ERROR collecting tests/test_a.py _______________________
ImportError while importing test module '/testbed/tests/test_a.py'.
E   ImportError: cannot import name 'feature' from 'lib'
=========================== short test summary info ============================
PASSED tests/test_b.py::test_ok
ERROR tests/test_a.py - ImportError: cannot import name 'feature' from 'lib'
========================= 1 passed, 1 error in 0.05s ==========================
`
	r := mustParse(t, Input{Stdout: []byte(out), ExitCode: 1,
		Expected: []string{"tests/test_a.py::test_feature", "tests/test_b.py::test_ok", "tests/test_b.py::test_param[gone]"}})
	checkOutcomes(t, r, map[string]want{
		"tests/test_a.py::test_feature":     {StatusCollectionError, "ImportError", "feature"},
		"tests/test_b.py::test_ok":          {StatusPassed, "", ""},
		"tests/test_b.py::test_param[gone]": {StatusMissing, "", "not reported by pytest"},
	})
	// Stopped by the collection error (no --continue-on-collection-errors):
	// nothing ran, and the error speaks for every test.
	stopped := strings.Replace(strings.Replace(out, "PASSED tests/test_b.py::test_ok\n", "", 1), "1 passed, 1 error", "1 error", 1)
	stopped = strings.Replace(stopped, "========================= 1 error in", "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n========================= 1 error in", 1)
	r = mustParse(t, Input{Stdout: []byte(stopped), ExitCode: 2, Expected: []string{"tests/test_a.py::test_feature", "tests/test_b.py::test_ok"}})
	checkOutcomes(t, r, map[string]want{
		"tests/test_a.py::test_feature": {StatusCollectionError, "ImportError", "feature"},
		"tests/test_b.py::test_ok":      {StatusCollectionError, "ImportError", "not run: collecting tests/test_a.py failed"},
	})
}
