package collect

import (
	"context"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/components"
	"github.com/featbench/featbench/internal/history"
	"github.com/featbench/featbench/internal/newcomp"
	"github.com/featbench/featbench/internal/pydefs"
)

// historyMethod is one collection method that works from a repository's
// history: FeatBench's release-driven method (paper 003, releaseMethod)
// and FEA-Bench's new-components method (004). The shared pipeline
// (historyRun) does everything the two have in common, in stages stored
// in the work folder like the test-driven method's:
//
//   - history: internal/history reads the git source up to the
//     configured commit: releases in the since/until window with their
//     notes, every pull request with its patch split into code and test
//     patches by the test-driven method's own test-file rule (testCode);
//   - select: the method picks its candidate pull requests (Select);
//   - filter: the shared filters (a readable diff, a code patch that
//     changes Python, a test patch that adds or changes tests), then the
//     Python definitions of every changed code file before and after
//     (internal/pydefs, in a container of the repository's Python), then
//     the method's own filters (Filters), each a step of the funnel;
//   - verify: each candidate's environment is its base commit with the
//     test patch and the patch applied (images.EnvSpec.Patches), which is
//     how cmd/eval builds it from the instance; the test patch's test
//     files and the other test files of their folders run after and
//     before the patch; FAIL_TO_PASS are the tests of the touched test
//     files that fail (or do not import) before and pass after,
//     PASS_TO_PASS those of all run files that pass both times; the
//     method accepts or refuses the runs (Accept); then cmd/eval's own
//     harness grades the instance in fresh containers: empty must not
//     resolve, gold must resolve verifyRuns times;
//   - statements: the method writes the problem statement (Statement),
//     which it checks for leaks (leaks, hasCode help);
//   - the dataset: the instance (bench.Instance with Method, PullNumber,
//     Release, base_commit the pull request's base) gets the method's
//     own fields (Extras), and the shared writer writes it.
//
// A method is one value of historyMethods; a new one is a new entry and
// a type implementing this interface, nothing else.
type historyMethod interface {
	// Name is the method, as instances and the configuration name it
	// (bench.MethodRelease, bench.MethodNewComponents).
	Name() string
	// Select picks the pull requests the method considers, in number
	// order, and records what it dropped on the way (r.dropSubject,
	// r.dropPull) and the funnel's first steps (r.step).
	Select(ctx context.Context, r *historyRun) ([]*prCandidate, error)
	// Filters are the method's own filters, applied after the shared
	// ones, in order.
	Filters() []prFilter
	// Accept judges a candidate's runs before and after its patch: "" to
	// go on to the harness's verification, else the drop's reason.
	Accept(pc *prCandidate) string
	// Statement writes the candidate's problem statement and checks it,
	// or says why the candidate is dropped (reason); err is for failures
	// of the machinery, not of the candidate.
	Statement(ctx context.Context, r *historyRun, pc *prCandidate) (text, reason string, err error)
	// Extras fills the method's own fields of the instance
	// (new-components: Components).
	Extras(pc *prCandidate, in *bench.Instance)
}

// prFilter is one filter of a method: Step names it in the funnel ("only
// modifies existing functions"); Drop returns "" when the candidate
// passes, else the one-line reason.
type prFilter struct {
	Step string
	Drop func(pc *prCandidate) string
	// Prepare, when set, runs first on the candidates that reached the
	// filter, all at once, for what Drop reads that needs a container or
	// the LLM (new-components: the differ, the intent).
	Prepare func(ctx context.Context, r *historyRun, pcs []*prCandidate) error
}

// historyMethods makes the method a repository's configuration names.
var historyMethods = map[string]func(rc config.Repo) historyMethod{
	bench.MethodRelease:       newReleaseMethod,
	bench.MethodNewComponents: newNewComponentsMethod,
}

// methodKey is what of a method its stored outputs depend on besides the
// shared pipeline's inputs (its scripts, its settings), when it says.
func methodKey(m historyMethod) string {
	if k, ok := m.(interface{ Key() string }); ok {
		return k.Key()
	}
	return ""
}

// prCandidate is one pull request on its way through a history-based
// method: the pull request and its patches, where it came from, and what
// each stage found.
type prCandidate struct {
	history.Change
	// Release is the tag of the release that brought it ("" when none
	// did); Entry is the release-notes entry it was selected by, with its
	// kind and how the entry was linked to it.
	Release string       `json:"release,omitempty"`
	Entry   string       `json:"entry,omitempty"`
	Kind    history.Kind `json:"kind,omitempty"`
	Link    string       `json:"link,omitempty"`
	// Defs are the code patch's Python files' definitions before and
	// after, by file (filter stage).
	Defs map[string]fileDefs `json:"defs,omitempty"`
	// Components are the code patch's new components (new-components'
	// filter stage), Intent its intent.
	Components *components.ChangeResult `json:"components,omitempty"`
	Intent     *newcomp.Intent          `json:"intent,omitempty"`

	verify prVerify
	stmt   string
	dead   bool
}

// fileDefs are one file's definitions before and after a patch, and what
// changed; Error says why either version could not be read.
type fileDefs struct {
	Before  []pydefs.Def   `json:"before,omitempty"`
	After   []pydefs.Def   `json:"after,omitempty"`
	Changes pydefs.Changes `json:"changes"`
	Error   string         `json:"error,omitempty"`
}

// prVerify is a candidate's verification: the runs before and after its
// patch, the tests they give, and the harness's checks.
type prVerify struct {
	Files      []string          `json:"files"` // the test files run
	Before     map[string]runOut `json:"before"`
	After      map[string]runOut `json:"after"`
	FailToPass []string          `json:"fail_to_pass"`
	PassToPass []string          `json:"pass_to_pass"`
	Image      string            `json:"image"`
	Check      *levelCheck       `json:"check,omitempty"` // the harness's: empty and gold
	Reason     string            `json:"reason,omitempty"`
}
