package bench

import (
	"time"
)

// MetadataFile and ResultsFile are the files of a submission folder,
// data/submissions/<name>/<version>/<split>/<YYYYMMDD>_<slug>/.
const (
	MetadataFile = "metadata.toml"
	ResultsFile  = "results.jsonl"
)

// Metadata describes the system behind a submission.
type Metadata struct {
	Name          string    `toml:"name"` // display name, e.g. "Codex + GPT-5.1-Codex"
	Scaffold      string    `toml:"scaffold"`
	Model         string    `toml:"model"`
	Organisations []string  `toml:"organisations"`
	Date          time.Time `toml:"date"`
	SiteURL       string    `toml:"site_url"`
	ReportURL     string    `toml:"report_url"`
	OpenWeights   bool      `toml:"open_weights"`
	OpenScaffold  bool      `toml:"open_scaffold"`
	Attempts      int       `toml:"attempts"` // tries per instance; 1 when not given
	Tags          []string  `toml:"tags"`
	Notes         string    `toml:"notes"`
	// Reference marks a baseline such as the gold patches or empty
	// predictions: shown apart from the ranked systems, not ranked, and
	// not counted in an instance's difficulty.
	Reference bool `toml:"reference"`
	// Links to what stands behind the figures, hosted elsewhere.
	LogsURL         string    `toml:"logs_url"`
	TrajectoriesURL string    `toml:"trajectories_url"`
	PredictionsURL  string    `toml:"predictions_url"`
	Reported        *Reported `toml:"reported"`

	// Checked is not read from metadata.toml: a submitter cannot set it.
	// It is true when data/checked.toml holds a maintainers' attestation
	// whose hash matches the submission's files as they are.
	Checked bool `toml:"-"`
}

// Reported is an aggregate published without per-instance data. The site
// shows it as published and marks it "reported, not recomputed".
type Reported struct {
	Source    string            `toml:"source"`
	Resolved  Figure            `toml:"resolved"`
	Passed    Figure            `toml:"passed"`
	TokensIn  Figure            `toml:"tokens_in"`
	TokensOut Figure            `toml:"tokens_out"`
	Cost      Figure            `toml:"cost"`
	Levels    map[string]*Score `toml:"levels"` // "L1", "L2"
	Repos     map[string]*Score `toml:"repos"`  // repository name
}

// Score is a reported breakdown: one level or one repository.
type Score struct {
	Source    string `toml:"source"`
	Resolved  Figure `toml:"resolved"`
	Passed    Figure `toml:"passed"`
	TokensIn  Figure `toml:"tokens_in"`
	TokensOut Figure `toml:"tokens_out"`
}

// Result is the evaluation of one prediction on one instance.
type Result struct {
	InstanceID   string   `json:"instance_id"`
	Resolved     bool     `json:"resolved"`
	PatchApplied bool     `json:"patch_applied"`
	F2PPassed    []string `json:"f2p_passed"`
	F2PFailed    []string `json:"f2p_failed"`
	P2PPassed    []string `json:"p2p_passed"`
	P2PFailed    []string `json:"p2p_failed"`
	FilesChanged int      `json:"files_changed"`
	TokensIn     *int64   `json:"tokens_in,omitempty"`
	TokensOut    *int64   `json:"tokens_out,omitempty"`
	Cost         *float64 `json:"cost,omitempty"`
	// Measured says tokens_in, tokens_out and cost were counted by the
	// harness (eval infer's metering proxy, from the trajectory the
	// submission's trajectories.tar.gz holds), not reported by the
	// agent; older files and self-reported figures leave it out.
	Measured bool `json:"measured,omitempty"`
	// Turns is how many model requests the agent made on the instance
	// (eval infer's metering proxy counts them); older files and agents
	// that report none leave it out.
	Turns        *int64   `json:"turns,omitempty"`
	FailureModes []string `json:"failure_modes,omitempty"`
	// What cmd/eval adds; older files leave them out.
	ApplyMethod      string   `json:"apply_method,omitempty"`      // how the patch applied: ApplyMethods
	FileRecall       *float64 `json:"file_recall,omitempty"`       // share of the gold patch's files the prediction touched
	Duration         *float64 `json:"duration,omitempty"`          // seconds the evaluation took
	Attempts         int      `json:"attempts,omitempty"`          // attempts evaluated (pass@k); 0 or 1 for one
	AttemptsResolved int      `json:"attempts_resolved,omitempty"` // of them, how many resolved
	// AttemptsPassed is, attempt by attempt, how many fail-to-pass tests
	// each attempt passed (0 where its patch did not apply): % passed is
	// a mean over attempts, as % resolved is. The line's own test lists
	// are one attempt's (cmd/eval: a resolved one, else the first).
	// Given only with attempts > 1; older files leave it out.
	AttemptsPassed []int `json:"attempts_passed,omitempty"`
	// Flags are the prediction's integrity flags (IntegrityFlags), in
	// their canonical order; older files leave them out.
	Flags []string `json:"flags,omitempty"`
	// Audit are the kinds of what the prediction's code did at run time
	// that the gold patch's did not (frames, tracing, code, code-swap,
	// test-file, process, signal, gc, ctypes: internal/pytest's audit
	// hook), sorted; older files leave them out.
	Audit []string `json:"audit,omitempty"`
	// Dataset, when given, is "name/version" and must match the folder.
	Dataset string `json:"dataset,omitempty"`

	Line int `json:"-"`
	// inst is the instance the result was checked against when loaded.
	inst *Instance
}

// ApplyMethods are how cmd/eval applies a prediction, tried in this order:
// the first that works is recorded in a result's apply_method.
var ApplyMethods = []string{"git apply", "git apply --3way", "patch"}

// Submission is one system's entry on one split of one dataset version.
type Submission struct {
	Metadata
	Dataset *Dataset
	Split   string
	Folder  string // <YYYYMMDD>_<slug>
	Slug    string
	Dir     string
	// Results are per-instance results, nil for a reported aggregate.
	Results []Result
	// Files are the files of the submission folder, sorted by name:
	// metadata.toml, and results.jsonl, predictions.jsonl, logs.tar.gz,
	// trajectories.tar.gz and README.md where present, each validated,
	// for the site to publish and link.
	Files []SubmissionFile
	// Trajectories index its trajectories.tar.gz, in the archive's order:
	// the entries Load checked (ReadTrajectories reads them).
	Trajectories []Trajectory
	// Attestation is the maintainers' attestation in data/checked.toml
	// that matches the submission's files, or nil; Checked is set with it.
	Attestation *Attestation
	byPos       []*Result // by the instance's place in Dataset.Instances
	metaLines   keyLines  // where each key of metadata.toml is written
}

// SubmissionFile is one file of a submission folder.
type SubmissionFile struct {
	Name string // e.g. "logs.tar.gz"
	Path string // the file under data/, to copy or link
	Size int64  // in bytes
}

// File returns the submission's file of that name, or nil.
func (s *Submission) File(name string) *SubmissionFile {
	for i := range s.Files {
		if s.Files[i].Name == name {
			return &s.Files[i]
		}
	}
	return nil
}

// ID is unique across all submissions: "name/version/split/folder".
func (s *Submission) ID() string { return s.Dataset.Key() + "/" + s.Split + "/" + s.Folder }

// MeasuredTokens reports whether the submission's token and cost figures
// were counted by the harness (eval infer's metering proxy): every result
// that has tokens says measured, and at least one has.
func (s *Submission) MeasuredTokens() bool {
	n := 0
	for i := range s.Results {
		r := &s.Results[i]
		if r.TokensIn == nil && r.TokensOut == nil && r.Cost == nil {
			continue
		}
		if !r.Measured {
			return false
		}
		n++
	}
	return n > 0
}

// PerInstance reports whether the submission's figures are computed from
// per-instance results rather than reported.
func (s *Submission) PerInstance() bool { return s.Reported == nil }

// ResultFor returns the result for an instance id, or nil when the system
// made no prediction for it.
func (s *Submission) ResultFor(id string) *Result {
	if in := s.Dataset.Instance(id); in != nil {
		return s.ResultOf(in)
	}
	return nil
}

// ResultOf returns the result for an instance of the submission's dataset,
// or nil when the system made no prediction for it. Pages ask this for
// every instance and system: it is a slice index, not a map lookup.
func (s *Submission) ResultOf(in *Instance) *Result {
	if in.pos >= len(s.Dataset.Instances) || s.Dataset.Instances[in.pos] != in {
		// An instance of another dataset: find this dataset's own.
		if in = s.Dataset.Instance(in.InstanceID); in == nil {
			return nil
		}
	}
	if in.pos < len(s.byPos) {
		return s.byPos[in.pos]
	}
	return nil
}

// index places each result at its instance's position. readResults keeps
// only results of known instances and records each one's instance.
func (s *Submission) index() {
	if len(s.Results) == 0 {
		return
	}
	s.byPos = make([]*Result, len(s.Dataset.Instances))
	for i := range s.Results {
		r := &s.Results[i]
		s.byPos[r.inst.pos] = r
	}
}
