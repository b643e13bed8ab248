package pytest

import (
	"path"
	"strconv"
	"strings"
	"time"
)

// RunOptions describe one pytest process over one test file.
type RunOptions struct {
	// Python is the interpreter; "python3" when empty.
	Python string
	// Root is pytest's --rootdir, and must be the working directory, so that
	// node ids and the -rA summary's ids are the same strings.
	Root string
	// File is the test file to run, relative to Root.
	File string
	// IDs, when not empty, are the node ids within File to run, selected
	// exactly by the plugin; ids that do not exist are simply not run.
	IDs []string
	// JUnitXML and JSONL are where the XML report and the plugin's stream go.
	JUnitXML string
	JSONL    string
	// Timeout is pytest-timeout's limit for each test (whole seconds are
	// written as such); 0 sets none.
	Timeout time.Duration
	// Classic selects console_output_style=classic (no progress column).
	Classic bool
	// PluginDir is the folder holding [PluginFile]; it goes first on
	// PYTHONPATH, followed by PythonPath, since PYTHONPATH set for the exec
	// replaces one the image sets.
	PluginDir  string
	PythonPath []string
	// Columns is the terminal width pytest formats for; 200 when 0.
	Columns int
	// Args are further pytest arguments, put before the file.
	Args []string

	// Runner, when set, is the path of [RunnerFile] in the container, in
	// the harness's folder (which, with everything in it, must be root's
	// alone: see boot.py, which exits [ExitHarnessChanged] otherwise): pytest
	// then runs through it as User (UID:GID, not root), with plugin
	// autoloading off, and the plugin's stream reaches JSONL through a pipe
	// that only the runner, as root, writes to the file (see runner.py).
	// PluginDir and PythonPath are then put on sys.path by the runner:
	// PythonPath after everything else, so that it cannot shadow a module.
	Runner string
	User   string
	// CopyJUnitTo, with Runner, is where the runner copies the JUnit XML
	// after pytest ends (Docker cannot copy out of a tmpfs mount).
	CopyJUnitTo string
	// Audit, with Runner and PluginDir (which then holds [AuditFile]),
	// records into the stream what code of Root or of PythonPath does
	// that a feature's code has no business doing (audit.py).
	Audit bool
}

// Command returns the argv that runs o's file:
//
//	python3 -m pytest -rA --color=no -p no:cacheprovider --rootdir=ROOT
//	  -o junit_family=xunit1 --junitxml=XML -p featbench_pytest
//	  [--featbench-jsonl=JSONL] [--timeout=N] [-o console_output_style=classic]
//	  [--featbench-id=ID ...] [ARGS ...] FILE
//
// xunit1 adds the file and line attributes, which tell collection errors
// apart; -rA gives a summary line for every test that is not skipped.
func Command(o RunOptions) []string {
	py := o.Python
	if py == "" {
		py = "python3"
	}
	argv := []string{py, "-m", "pytest"}
	if o.Runner != "" {
		// Root starts the runner through the boot script, given on the
		// command line: it first checks that nothing of the harness's
		// folder is anyone's but root's and that the runner and the
		// plugin are the harness's own (boot.py).
		argv = []string{py, "-I", "-c", bootSource, "--root", path.Dir(o.Runner),
			o.Runner + "=" + runnerDigest}
		if o.PluginDir != "" {
			argv = append(argv, path.Join(o.PluginDir, PluginFile)+"="+pluginDigest)
			if o.Audit {
				argv = append(argv, path.Join(o.PluginDir, AuditFile)+"="+auditDigest)
			}
		}
		argv = append(argv, "--", "--user", o.User, "--stream", o.JSONL, "--cwd", o.Root)
		if o.Audit && o.PluginDir != "" {
			argv = append(argv, "--audit", o.Root)
		}
		if o.PluginDir != "" {
			argv = append(argv, "--plugin-dir", o.PluginDir)
		}
		for _, p := range o.PythonPath {
			argv = append(argv, "--path", p)
		}
		if o.CopyJUnitTo != "" {
			argv = append(argv, "--copy", o.JUnitXML, o.CopyJUnitTo)
		}
		argv = append(argv, "--")
	}
	argv = append(argv, "-rA", "--color=no", "-p", "no:cacheprovider")
	if o.Root != "" {
		argv = append(argv, "--rootdir="+o.Root)
	}
	argv = append(argv, "-o", "junit_family=xunit1")
	if o.JUnitXML != "" {
		argv = append(argv, "--junitxml="+o.JUnitXML)
	}
	if o.Runner == "" {
		argv = append(argv, "-p", PluginModule)
	}
	if o.JSONL != "" && o.Runner == "" {
		argv = append(argv, "--featbench-jsonl="+o.JSONL)
	}
	if o.Timeout > 0 {
		argv = append(argv, "--timeout="+strconv.FormatFloat(o.Timeout.Seconds(), 'f', -1, 64))
	}
	if o.Classic {
		argv = append(argv, "-o", "console_output_style=classic")
	}
	for _, id := range o.IDs {
		argv = append(argv, "--featbench-id="+id)
	}
	argv = append(argv, o.Args...)
	return append(argv, o.File)
}

// CoverageFile is where the runner's tests keep coverage's data.
const CoverageFile = "/tmp/.featbench-coverage"

// Env returns the environment variables to set for [Command]'s process, as
// NAME=value. CI=1 stops pytest from cutting summary messages to the
// terminal width; PYTHONDONTWRITEBYTECODE keeps the tree clean for the next
// run; PYTHONIOENCODING keeps non-ASCII node ids intact under a C locale.
func Env(o RunOptions) []string {
	cols := o.Columns
	if cols <= 0 {
		cols = 200
	}
	var path []string
	if o.PluginDir != "" {
		path = append(path, o.PluginDir)
	}
	path = append(path, o.PythonPath...)
	env := []string{
		"CI=1",
		"COLUMNS=" + strconv.Itoa(cols),
		"PYTHONDONTWRITEBYTECODE=1",
		"PYTHONIOENCODING=utf-8",
	}
	if o.Runner != "" {
		// The runner sets up sys.path itself; HOME is one the user can
		// write, and so is coverage's data file: a project whose addopts
		// turn pytest-cov on (python-semver's --cov) would otherwise end
		// every run in an INTERNALERROR, writing .coverage into the
		// working folder, which the tests' user cannot.
		return append(env, "HOME=/tmp", "COVERAGE_FILE="+CoverageFile)
	}
	if len(path) > 0 {
		env = append(env, "PYTHONPATH="+strings.Join(path, ":"))
	}
	return env
}
