package pytest

import (
	_ "embed"
	"os"
	"path/filepath"
)

//go:embed plugin.py
var pluginSource string

//go:embed runner.py
var runnerSource string

// RunnerFile is the name the runner is installed under (see
// [RunOptions].Runner).
const RunnerFile = "featbench_run.py"

// RunnerSource returns the runner's Python source.
func RunnerSource() []byte { return []byte(runnerSource) }

//go:embed guard.py
var guardSource string

// GuardFile is the name the guard is installed under: run as root with
// python3 -I, it puts a repository's test infrastructure back as its HEAD
// has it (see guard.py).
const GuardFile = "featbench_guard.py"

// GuardSource returns the guard's Python source.
func GuardSource() []byte { return []byte(guardSource) }

// The plugin's module name, for "-p", and the file name it must be installed
// under in a folder on PYTHONPATH.
const (
	PluginModule = "featbench_pytest"
	PluginFile   = PluginModule + ".py"
)

// The JUnit properties the plugin writes for each test.
const (
	propNodeID   = "featbench_nodeid"
	propExc      = "featbench_exc_" // + setup, call or teardown
	propWasXFail = "featbench_wasxfail"
)

// PluginSource returns the plugin's Python source, to be installed as
// [PluginFile].
func PluginSource() []byte { return []byte(pluginSource) }

// WritePlugin writes the plugin into dir as [PluginFile] and returns its path.
func WritePlugin(dir string) (string, error) {
	p := filepath.Join(dir, PluginFile)
	return p, os.WriteFile(p, PluginSource(), 0o644)
}
