// Package evaluate grades agents' predictions on task instances in
// containers: it rebuilds an instance's starting point from its
// repository's environment image, applies the prediction byte for byte,
// adds the instance's tests and runs them with pytest, one process per test
// file, then grades every FAIL_TO_PASS and PASS_TO_PASS test. Each instance
// and attempt gets its own container (no network, limited memory, CPUs and
// processes) and a folder of logs; its report is written last, through a
// temporary file and a rename, so a killed run loses only the instances in
// flight and a re-run resumes.
//
// The flows follow FeatureBench's harness (paper 000, appendix B):
//
//   - level 1, and level 2 set "in_repo": start from the instance's base,
//     apply the prediction, put back what the prediction changed in the
//     test patch's files, apply the test patch, run the test files of the
//     FAIL_TO_PASS tests, then those of the PASS_TO_PASS tests;
//   - level 2 set "agent_code" (FeatureBench's from-scratch setting): apply
//     the prediction to an empty folder, install it as the package
//     agent_code, restore the repository, apply the level 2 test patch
//     (its tests import agent_code), run the FAIL_TO_PASS tests.
//
// Where the base comes from depends on the dataset's layout: in the
// "complete" layout the environment holds the complete project and the
// base is that with the instance's test patch and patch reverse-applied; in
// FeatureBench's "masked" layout the patch is the masking diff, applied to
// the complete project, and the fail-to-pass test files are deleted (the
// level 1 test patch deletes them; it is reverse-applied to grade).
package evaluate

import (
	"encoding/json"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/pytest"
)

// Prediction is what an agent produced for one instance and attempt.
type Prediction struct {
	Model      string
	Patch      []byte // exactly as the agent wrote it
	TokensIn   *int64
	TokensOut  *int64
	Cost       *float64
	Trajectory json.RawMessage
	// Measured says eval infer's proxy counted TokensIn, TokensOut, Cost
	// and Turns, from the exchanges in the file TrajectoryFile (checked
	// against it before the run).
	Measured       bool
	Turns          *int64
	TrajectoryFile string
	// FailureMode is why the agent stopped without finishing, as the
	// predictions file gives it (eval infer's failure_mode: TurnLimit,
	// AgentTimeout, UpstreamError, ...).
	FailureMode string
}

// Limits bound one instance's evaluation.
type Limits struct {
	TestFile  time.Duration // one test file's pytest run
	Test      time.Duration // one test (pytest-timeout); 0 for none
	Instance  time.Duration // the whole instance and attempt
	Container container.Limits
}

// Status of a test as graded.
const (
	Passed  = "passed"
	Failed  = "failed"
	Timeout = "timeout"
)

// TestResult is how one of the instance's tests ended.
type TestResult struct {
	Kind    string  `json:"kind"`               // "F2P" or "P2P"
	Status  string  `json:"status"`             // pytest's outcome: passed, failed, error, skipped, ...
	Passed  bool    `json:"passed"`             // counts as passed under the grading rules
	ExcType string  `json:"exc_type,omitempty"` // the exception behind a failure
	Message string  `json:"message,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
}

// FileRun is one pytest run, of one or more test files.
type FileRun struct {
	Files    []string `json:"files"`
	Log      string   `json:"log"` // the files of the run under tests/, without extension
	ExitCode int      `json:"exit_code"`
	TimedOut bool     `json:"timed_out,omitempty"`
	Seconds  float64  `json:"seconds"`        // wall time of the exec
	Pytest   float64  `json:"pytest_seconds"` // what pytest reports for itself
	Note     string   `json:"note,omitempty"` // disagreements between JUnit XML and -rA, seen by the parser
	// Try is 1, or 2 for a run of the attempt's second evaluation, in a
	// fresh container after an unverified run; 0 in older reports (1).
	Try int `json:"try,omitempty"`
	// Canaries names the run whose outputs hold the canary script's
	// output for this try (<log>.canaries.json), when canaries were added.
	Canaries string `json:"canaries,omitempty"`
	// Unverified says why the run's channels cannot be believed
	// (pytest.Integrity.Unverified).
	Unverified []string `json:"unverified,omitempty"`
}

// CanaryResult is how one canary test ended: ID is its test id in the
// run, Twin the dataset id of the test it is a copy of.
type CanaryResult struct {
	ID     string `json:"id"`
	Twin   string `json:"twin"`
	Status string `json:"status"`
}

// Report is one instance and attempt, as evaluated: report.json in its
// folder. Everything a results.jsonl line holds comes from it.
type Report struct {
	InstanceID string `json:"instance_id"`
	Attempt    int    `json:"attempt"`
	Model      string `json:"model,omitempty"`
	Level      int    `json:"level"`
	Flow       string `json:"flow"` // "repo" or "agent_code"

	PatchEmpty   bool     `json:"patch_empty"`
	PatchRefused string   `json:"patch_refused,omitempty"` // why the patch was not tried
	PatchApplied bool     `json:"patch_applied"`
	ApplyMethod  string   `json:"apply_method,omitempty"`
	InstallOK    *bool    `json:"install_ok,omitempty"` // agent_code: pip installed the prediction
	FilesChanged int      `json:"files_changed"`
	FileRecall   *float64 `json:"file_recall,omitempty"`

	Tests map[string]TestResult `json:"tests"` // every FAIL_TO_PASS and PASS_TO_PASS test
	Runs  []FileRun             `json:"runs"`

	Resolved     bool     `json:"resolved"`
	PassedRate   float64  `json:"passed_rate"` // share of FAIL_TO_PASS tests passed
	FV           bool     `json:"fv"`          // every FAIL_TO_PASS test passed
	RT           bool     `json:"rt"`          // every PASS_TO_PASS test passed
	FailureModes []string `json:"failure_modes,omitempty"`
	TimedOut     bool     `json:"timed_out,omitempty"`
	// Flags are the prediction's integrity flags (internal/integrity),
	// computed from the diff before anything runs.
	Flags []string `json:"flags,omitempty"`
	// Tampering is what the harness saw of the prediction changing how
	// pytest makes or reports outcomes; any makes the instance unresolved
	// (failure mode GraderTampering).
	Tampering []string `json:"tampering,omitempty"`
	// DiskLimit says the tests filled the space they may write to.
	DiskLimit bool `json:"disk_limit,omitempty"`
	// Canaries are the canary tests of the last try and how they ended: a
	// canary that passed beside its twin is tampering (grade).
	Canaries []CanaryResult `json:"canaries,omitempty"`
	// Audit is what the audit hook recorded of the prediction's code in
	// the last try; AuditFlags its kinds that the gold patch's runs did
	// not make (the instance's gold_audit), which the site shows.
	Audit      []pytest.AuditRecord `json:"audit,omitempty"`
	AuditFlags []string             `json:"audit_flags,omitempty"`

	TokensIn  *int64   `json:"tokens_in,omitempty"`
	TokensOut *int64   `json:"tokens_out,omitempty"`
	Cost      *float64 `json:"cost,omitempty"`
	// Measured says the tokens, cost and turns were counted by eval
	// infer's metering proxy, not reported by the agent; Trajectory is
	// then the SHA-256 of the exchanges they were counted from
	// (trajectory.jsonl in the attempt's folder, trajectories.tar.gz in
	// a submission).
	Measured   bool   `json:"measured,omitempty"`
	Turns      *int64 `json:"turns,omitempty"`
	Trajectory string `json:"trajectory,omitempty"`
	// AgentFailure is why the agent stopped without finishing (the
	// prediction's failure_mode); grading adds it to FailureModes.
	AgentFailure string `json:"agent_failure,omitempty"`

	Seconds       float64   `json:"seconds"`        // the whole attempt, wall time: its staging and its turn, not the wait between
	PytestSeconds float64   `json:"pytest_seconds"` // what pytest reports, summed over the runs
	Image         string    `json:"image"`
	Finished      time.Time `json:"finished"`

	// Error says the harness could not evaluate the instance (the engine
	// failed, the image is missing): not the prediction's doing, and not
	// a result. Such a report is not a completion: a re-run tries again.
	Error string `json:"error,omitempty"`
	// Retried says the attempt was evaluated a second time, from the
	// start, because its container or the node running it was lost (a
	// swarm node stopped), and why: this report is the second's.
	Retried string `json:"retried,omitempty"`
}
