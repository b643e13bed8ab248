// Package pytest runs test files with pytest and turns what a run leaves
// behind into one outcome per expected test id.
//
// # Running
//
// [Command] and [Env] give the argv and environment for one pytest process
// over one test file, as the evaluation harness runs it inside a container
// (one process per file, so that a file that fails to import fails only its
// own tests). The run loads the embedded plugin ([PluginSource], installed as
// [PluginFile] in a folder on PYTHONPATH and loaded with "-p
// featbench_pytest"), which
//
//   - writes each test's node id and, for a phase that raised, the exception
//     type name into the JUnit XML as properties (JUnit's classname/name pair
//     cannot be turned back into a node id);
//   - streams one JSON line per test report to a file, flushed line by line,
//     because pytest writes its XML only when the session ends and a run
//     killed by a timeout would otherwise leave nothing;
//   - selects node ids exactly (--featbench-id), because with pytest's own
//     positional ids one id that does not exist stops the whole run (exit 4,
//     "ERROR: not found").
//
// The working directory must be the rootdir given to [Command]: node ids are
// rootdir-relative, the -rA summary's are relative to the working directory.
//
// # Parsing
//
// [Parse] reads the JUnit XML, the JSON lines, pytest's output and exit code.
// Sources, most trusted first:
//
//  1. JUnit XML testcases, matched by the plugin's node id property; a
//     testcase without it (a log from a run without the plugin, or the first
//     of the two testcases pytest writes for a call failure plus a teardown
//     error) is matched by forward-mangling the expected ids into JUnit's
//     (classname, name) exactly as pytest does.
//  2. The JSON lines, for tests the XML does not hold (missing or truncated
//     XML after a kill or a crash).
//  3. The -rA short test summary, parsed by the longest known id that fits
//     (ids hold spaces, "::" and " - " inside their parameters), only for
//     tests neither of the above holds. Where it and the XML disagree, the
//     disagreement is recorded and JUnit wins; the exit status is checked
//     against the results too, and what does not fit becomes a note.
//
// Several results for one test (a call failure and a teardown error) are
// combined by rank: error > timeout > failed > skipped > xfailed > xpassed >
// passed.
//
// An expected id that holds no "::" is a test file, as FeatureBench's datasets
// list them (one with "::" that names a class or function with no test of
// exactly that id is treated the same way, as a group): its outcome is passed
// when at least one of its tests passed and none failed or errored — skipped
// and xfailed members are tolerated, as pytest's exit status (which
// FeatureBench grades by) tolerates them; a group whose members were all
// skipped (or xfailed) is skipped (or xfailed). Otherwise it takes its worst
// member's status. A run that stopped early (a timeout, a crash) may have
// left some of a group's tests unreported, so the group is then at best
// timeout or missing.
//
// Expected ids without a result: when collection failed (a test module that
// does not import, a conftest.py that does not import) every such id gets
// [StatusCollectionError], with the exception type behind the failure; when the run
// timed out ([Input.TimedOut]) they get [StatusTimeout]; otherwise [StatusMissing]. A test
// stopped by pytest-timeout (--timeout) is [StatusTimeout] too, with exception type
// "Timeout".
//
// # Grading
//
// [Passed] is the rule for FAIL_TO_PASS tests: only passed counts. Skipped,
// missing, errored, timed out and collection errors fail, and so do xfailed
// (the feature's test did not pass) and xpassed (a test marked as expected to
// fail is not a feature's proof). [Maintained] is the rule for PASS_TO_PASS:
// passed, xfailed and xpassed keep a test (pytest's exit status accepts all
// three and SWE-bench's datasets list xfail tests as P2P); a skipped P2P test
// is a regression, since an agent could skip what it broke. [FailureMode]
// names the cause of a failing outcome for failure-mode charts.
package pytest
