package pytest

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"os"
	"path/filepath"
)

//go:embed plugin.py
var pluginSource string

//go:embed runner.py
var runnerSource string

//go:embed boot.py
var bootSource string

//go:embed audit.py
var auditSource string

// AuditFile is the name the audit module is installed under, beside the
// plugin: the runner imports it before pytest (see [RunOptions].Audit).
const AuditFile = "featbench_audit.py"

// AuditSource returns the audit module's Python source.
func AuditSource() []byte { return []byte(auditSource) }

// The SHA-256 of the runner and the plugin, which boot.py checks before
// root runs the one and the tests' user imports the other.
var (
	runnerDigest = digest(runnerSource)
	pluginDigest = digest(pluginSource)
	auditDigest  = digest(auditSource)
)

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// ExitHarnessChanged is the exit status of a run that did not start because
// the harness's folder, its runner or its plugin were not as the harness
// made them (boot.py): someone other than root changed them.
const ExitHarnessChanged = 86

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
