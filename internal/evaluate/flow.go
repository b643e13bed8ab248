package evaluate

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/canary"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/integrity"
	"github.com/featbench/featbench/internal/patch"
	"github.com/featbench/featbench/internal/pyinstall"
	"github.com/featbench/featbench/internal/pytest"
)

// Paths inside a container.
const (
	repoDir   = "/testbed"   // the repository, as the environment image holds it
	agentDir  = "/agent"     // level 2 (agent_code): the agent's own folder
	fbDir     = "/fb"        // what the harness brings: patches, the plugin
	outDir    = "/fb/out"    // what pytest writes for the harness to read
	pluginDir = "/fb/plugin" // on PYTHONPATH: the pytest plugin
	predFile  = "/fb/prediction.diff"
	goldFile  = "/fb/patch.diff"
	// maskedGold is, for the gold prediction of a masked instance, the
	// masking diff without its changes to the fail-to-pass test files
	// (deleted before the prediction applies): reverse-applied, it is the
	// solution, as FeatureBench's harness makes it.
	maskedGold = "/fb/gold.diff"
	testFile   = "/fb/test_patch.diff"
	maskFile   = "/fb/mask.diff" // level 2: masks the original package
	// The canary script's input, and its output: root's alone, so that
	// the tests' user cannot read which test is a canary.
	canarySpecFile = "/fb/canary-spec.json"
	canaryOut      = "canaries.json" // in outDir
	canaryScript   = fbDir + "/" + canary.File
	runner         = fbDir + "/" + pytest.RunnerFile
	guard          = fbDir + "/" + pytest.GuardFile
	installer      = fbDir + "/" + pyinstall.File
	maxOutput      = 4 << 20 // bytes kept of one command's output

	// What the prediction's code runs as: not root, so it can change
	// neither the repository, the tests, pytest nor the harness's files;
	// it writes only to the size-bounded temporary folders.
	testUID  = "65534"                 // nobody, in every Debian image
	testUser = testUID + ":" + testUID // with its group, nogroup
	// The folders the tests' user writes the harness's way: root makes
	// them before any of the prediction's code runs, in a parent only
	// root can change, so that no name root later uses can have been
	// made a link by the tests' user (scratchScript).
	scratchDir = "/tmp/featbench"
	junitDir   = scratchDir + "/junit"
	agentSite  = scratchDir + "/agent" // level 2: the prediction, installed by the tests' user
)

// scratchScript makes the folders the tests' user writes for the harness,
// as root, before any code of the prediction runs: a fresh parent of
// root's, which the tests' user cannot add to, rename in or remove from,
// and in it folders of the tests' user's own. mkdir without -p fails
// where the name exists.
const scratchScript = "rm -rf " + scratchDir + " && mkdir -m 0755 " + scratchDir +
	" && mkdir -m 0700 " + junitDir + " " + agentSite + " && chown -h " + testUser + " " + junitDir + " " + agentSite + "\n"

// asTestUser runs argv as testUser, without root's groups, and unable to
// gain privileges through a setuid or setcap program: the local engine
// sets no-new-privileges on the container, but a swarm task of Docker
// 20.10 does not get it (docs/executors.md), so the harness sets it on
// everything the prediction runs.
func asTestUser(argv ...string) []string {
	return append([]string{"setpriv", "--reuid=" + testUID, "--regid=" + testUID, "--clear-groups", "--no-new-privs", "env", "HOME=/tmp"}, argv...)
}

// sealScript leaves the starting point as the only commit of the repository
// (no earlier commit, reflog, tag, stash or object holds the removed code),
// without compiled copies of the code or pip's cache, and removes the gold
// patch from the container unless the flow still needs it (keepGold: no
// flow does now; a masked instance's gold prediction is maskedGold).
func sealScript(keepGold bool) string {
	s := `set -e
rm -rf .git /root/.cache
find . -name __pycache__ -prune -exec rm -rf {} +
find . -name '*.py[co]' -delete
git init -q && git add -A -f && git commit -q --allow-empty --no-verify -m base
`
	if !keepGold {
		s += "rm -f " + goldFile + "\n"
	}
	return s
}

// Task is one instance and attempt to evaluate.
type Task struct {
	Dataset    *bench.Dataset
	Instance   *bench.Instance
	Attempt    int
	Prediction Prediction
	// Gold marks the instance's own patch as the prediction: in the masked
	// layout, where patch is the masking diff, the gold solution is that
	// diff reverse-applied.
	Gold   bool
	Image  string            // the repository's environment image
	Labels map[string]string // the container's, to find it again
	// DeriveCanaries gives every mutable place of every fail-to-pass test
	// canaries (collection's run of the gold patch, which says which
	// places are sound: canary.Sound); otherwise the instance's own
	// places get canaries drawn with a fresh seed (internal/canary).
	DeriveCanaries bool
}

// flow is one task's evaluation in its container: the steps, the log of
// every command, and the report they fill.
type flow struct {
	t      Task
	lim    Limits
	box    executor.Box
	log    io.Writer         // container.log
	files  map[string][]byte // test outputs, saved under tests/
	rep    *Report
	agent  bool // level 2 from scratch: the prediction goes to /agent
	masked bool
	placed bool // the tests are in place (addTests ran)
	// python runs pytest, the runner and the guard: the repository's
	// interpreter, else python3 from $PATH.
	python string
	// ownImage: the instance's image is its environment (FeatureBench's
	// layout: the complete project in /testbed, a copy in /root/my_repo);
	// args are its test command's options passed on to pytest.
	ownImage bool
	args     []string
	// canaries is the canary script's input, nil when the instance gets
	// none; mapping its output in this try, read from the first run.
	canaries *canary.Spec
	mapping  *canary.Mapping
	mapLog   string // the run whose outputs hold mapping
	try      int    // 1, or 2 in a fresh container after an unverified run
}

// Evaluate runs one task in a new container and returns its report. The
// container is removed in every case. An error is an infrastructure
// failure (the report's Error says so too); a prediction that does not
// apply or fails its tests is a report, not an error. files are the raw
// outputs of the test runs, by name, for the run folder.
func Evaluate(ctx context.Context, eng executor.Starter, t Task, lim Limits, log io.Writer) (rep *Report, files map[string][]byte, err error) {
	return prepare(ctx, eng, t, lim, log).finish(ctx, func(box executor.Box) { box.Remove() })
}

// staged is a task taken through the harness's own part of the flow in
// its fresh container: started, the harness's files copied in, the
// starting point reached and sealed, the prediction applied, and at level
// 1 the guard run and the test patch applied. Nothing of
// the prediction has run yet (applying a diff runs none of its code), so
// a run can stage the next task while the current one's prediction runs
// its tests, and one worker still runs one prediction's code at a time.
type staged struct {
	f        *flow
	eng      executor.Starter // a second try's fresh container comes from it
	spent    time.Duration    // counted in the instance's time and deadline
	applied  bool             // the prediction applied: its tests are to run
	err      error            // the set-up failed
	timedOut bool             // the set-up ran out of the instance's time
}

// prepare starts t's container and takes it through the harness's part
// of the flow. Whatever happens, finish (or discard) must follow: it
// removes the container.
func prepare(ctx context.Context, eng executor.Starter, t Task, lim Limits, log io.Writer) *staged {
	start := time.Now()
	s := &staged{f: newFlow(t, lim, log), eng: eng}
	defer func() { s.spent = time.Since(start) }()
	if lim.Instance > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lim.Instance)
		defer cancel()
	}
	s.stage(ctx)
	return s
}

// stage starts a fresh container for the flow and takes it to where the
// prediction's tests are to run.
func (s *staged) stage(ctx context.Context) {
	t, f := s.f.t, s.f
	if !t.Gold && !patch.Empty(t.Prediction.Patch) {
		// A patch the harness would refuse (too large, a path out of the
		// repository, a binary...) costs no container.
		if err := patch.Check(t.Prediction.Patch, patch.Limits{}); err != nil {
			f.rep.PatchRefused = err.Error()
			fmt.Fprintf(f.log, "prediction refused before a container started: %v\n\n", err)
			return
		}
	}
	box, err := s.eng.Start(ctx, container.Spec{
		Image: t.Image, Name: "featbench-eval", Labels: t.Labels, WorkDir: repoDir, Limits: containerLimits(f.lim),
	})
	if err != nil {
		s.err = fmt.Errorf("starting a container from %s: %w", t.Image, err)
		return
	}
	f.box = box
	if err := f.copyIn(ctx); err != nil {
		s.fail(ctx, err)
		return
	}
	applied, err := f.setUpAndApply(ctx)
	if err != nil {
		// A lost container (a swarm node gone): the run retries it.
		s.fail(ctx, err)
		return
	}
	s.applied = applied
	if s.applied && !f.agent && !f.placed {
		// Level 1: the guard and the test patch are the harness's own
		// code too. Level 2's install runs the prediction's (its build),
		// at its turn, before its tests (runFiles).
		if err := f.addTests(ctx); err != nil {
			s.fail(ctx, err)
		}
	}
}

// fail records a set-up error: a result when the instance ran out of
// time (tests without an outcome time out), else the harness's failure.
func (s *staged) fail(ctx context.Context, err error) {
	if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		s.timedOut = true
		return
	}
	s.err = err
}

// finish runs the prediction's part of the flow (its tests, and at level
// 2 its install) within what is left of the instance's time, grades it,
// and hands the container to remove.
func (s *staged) finish(ctx context.Context, remove func(executor.Box)) (rep *Report, files map[string][]byte, err error) {
	start := time.Now()
	f := s.f
	rep = f.rep
	defer func() {
		if f.box != nil {
			remove(f.box)
		}
		rep.Seconds = (s.spent + time.Since(start)).Seconds()
		rep.Finished = time.Now().UTC()
		if err != nil {
			rep.Error = err.Error()
		}
	}()
	if s.err != nil {
		return rep, f.files, s.err
	}
	if f.lim.Instance > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.lim.Instance-s.spent)
		defer cancel()
	}
	if !s.timedOut && !s.applied {
		f.grade()
		return rep, f.files, nil
	}
	if !s.timedOut {
		err = f.runTests(ctx)
	}
	if err == nil && f.try == 1 && len(f.rep.Tampering) == 0 && len(f.unverified()) > 0 {
		// A run whose channels cannot be believed (its stream's end not
		// the runner's, a signal the harness did not send, ...): the
		// whole attempt once more, in a fresh container. Unverified twice
		// is tampering (grade).
		fmt.Fprintf(f.log, "unverified: %s\nevaluating the attempt again in a fresh container\n\n", strings.Join(f.unverified(), "; "))
		remove(f.box)
		f.box = nil
		f.nextTry()
		s.applied, s.timedOut = false, false
		s.stage(ctx)
		switch {
		case s.err != nil:
			return rep, f.files, s.err
		case !s.timedOut && !s.applied:
			f.grade()
			return rep, f.files, nil
		case !s.timedOut:
			err = f.runTests(ctx)
		}
	}
	if s.timedOut || err != nil && ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		// The instance ran out of time: a result, not a failure of
		// the harness. Tests without an outcome timed out.
		rep.TimedOut = true
		f.grade()
		return rep, f.files, nil
	}
	if err != nil {
		return rep, f.files, err
	}
	f.grade()
	return rep, f.files, nil
}

// discard removes a staged task's container without running it: the run
// stopped before its turn.
func (s *staged) discard() {
	if s.f.box != nil {
		s.f.box.Remove()
	}
}

// newFlow is t's flow, with its report started: who and what is graded,
// how (the dataset's flow), and the prediction's integrity flags.
func newFlow(t Task, lim Limits, log io.Writer) *flow {
	in := t.Instance
	rep := &Report{
		InstanceID: in.InstanceID, Attempt: t.Attempt, Model: t.Prediction.Model, Level: in.Level, Flow: FlowOf(t.Dataset, in),
		TokensIn: t.Prediction.TokensIn, TokensOut: t.Prediction.TokensOut, Cost: t.Prediction.Cost,
		Measured: t.Prediction.Measured, Turns: t.Prediction.Turns, AgentFailure: t.Prediction.FailureMode,
		Image: t.Image, Tests: map[string]TestResult{},
		Flags: integrity.Flags(t.Dataset, in, t.Prediction.Patch, t.Gold),
	}
	f := &flow{t: t, lim: lim, log: log, files: map[string][]byte{}, rep: rep, try: 1,
		masked: t.Dataset.LayoutOrDefault() == bench.LayoutMasked, agent: rep.Flow == "agent_code", python: "python3"}
	if r := t.Dataset.Repository(in.Repo); r != nil && r.Environment != nil && r.Environment.Interpreter != "" {
		f.python = r.Environment.Interpreter
	}
	if t.Dataset.ImagesOrDefault() == bench.ImagesInstance {
		f.ownImage = true
		// Checked when the dataset was loaded.
		if ts, err := in.TestSettings(); err == nil {
			if ts.Python != "" {
				f.python = ts.Python
			}
			f.args = ts.Args
			if ts.Run > 0 {
				f.lim.TestFile = ts.Run
			}
			if ts.Test > 0 {
				f.lim.Test = ts.Test
			}
		}
	}
	f.canaries = canarySpec(t)
	return f
}

// canarySpec is the canary script's input for t, nil when t gets no
// canaries: an instance without sound places, unless collection derives
// them. The seed is drawn now, by nobody.
func canarySpec(t Task) *canary.Spec {
	in := t.Instance
	if len(in.Canaries) == 0 && !t.DeriveCanaries {
		return nil
	}
	tests := canary.Functions(in.FailToPass)
	if len(tests) == 0 {
		return nil
	}
	sp := &canary.Spec{Root: repoDir, Tests: tests, Max: canary.MaxPerInstance}
	if !t.DeriveCanaries {
		sp.Sites = in.Canaries
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	sp.Seed = binary.BigEndian.Uint64(b[:])
	return sp
}

// nextTry readies the flow for a second try in a fresh container: what the
// first try's tests said is set aside (its runs stay in the report and its
// outputs in the files, for validate), with a new canary seed.
func (f *flow) nextTry() {
	f.try++
	f.placed, f.mapping, f.mapLog = false, nil, ""
	f.rep.Tests, f.rep.Canaries, f.rep.Audit = map[string]TestResult{}, nil, nil
	f.rep.PatchApplied, f.rep.ApplyMethod, f.rep.InstallOK = false, "", nil
	f.canaries = canarySpec(f.t)
}

// unverified lists what made this try's runs unverified.
func (f *flow) unverified() []string {
	var out []string
	for _, r := range f.rep.Runs {
		if r.Try == f.try {
			out = append(out, r.Unverified...)
		}
	}
	return out
}

// restoreScript takes, in an instance's own image, /testbed back to the
// complete project as the image keeps it in /root/my_repo (FeatureBench's
// harness does the same, the same way: names starting with a dot stay as
// /testbed has them), and removes that copy, which holds the solution and
// which nothing after needs.
const restoreScript = `if [ -d /root/my_repo ]; then rm -rf /testbed/* && cp -r /root/my_repo/* /testbed/; fi
rm -rf /root/my_repo
`

// containerLimits are lim's container limits, with what the tests may
// write bounded: half the memory they may use (tmpfs pages count in it),
// else 1 GiB, unless set.
func containerLimits(lim Limits) container.Limits {
	cl := lim.Container
	if cl.Tmp <= 0 {
		cl.Tmp = 1 << 30
		if cl.Memory > 0 {
			cl.Tmp = cl.Memory / 2
		}
	}
	return cl
}

// copyIn brings what the harness needs into the container: the
// prediction, the instance's patches, the plugin, the runner and the guard.
func (f *flow) copyIn(ctx context.Context) error {
	in := f.t.Instance
	files := []container.File{
		{Path: "prediction.diff", Mode: 0o644, Data: f.t.Prediction.Patch},
		{Path: "patch.diff", Mode: 0o644, Data: []byte(in.Patch)},
		{Path: "test_patch.diff", Mode: 0o644, Data: []byte(in.TestPatch)},
		{Path: "plugin/" + pytest.PluginFile, Mode: 0o644, Data: pytest.PluginSource()},
		{Path: pytest.RunnerFile, Mode: 0o644, Data: pytest.RunnerSource()},
		{Path: pytest.GuardFile, Mode: 0o644, Data: pytest.GuardSource()},
		{Path: "out/.keep", Mode: 0o644},
	}
	if f.agent && in.MaskPatch != "" {
		files = append(files, container.File{Path: path.Base(maskFile), Mode: 0o644, Data: []byte(in.MaskPatch)})
	}
	if f.agent {
		files = append(files, container.File{Path: pyinstall.File, Mode: 0o644, Data: pyinstall.Source()})
	}
	if f.t.Gold && f.masked && !f.agent {
		files = append(files, container.File{Path: path.Base(maskedGold), Mode: 0o644, Data: withoutFiles([]byte(in.Patch), f2pFiles(in))})
	}
	files = append(files, container.File{Path: "plugin/" + pytest.AuditFile, Mode: 0o644, Data: pytest.AuditSource()})
	if f.canaries != nil {
		spec, err := json.Marshal(f.canaries)
		if err != nil {
			return fmt.Errorf("encoding the canaries' spec: %w", err)
		}
		files = append(files, container.File{Path: canary.File, Mode: 0o644, Data: canary.Source()},
			container.File{Path: path.Base(canarySpecFile), Mode: 0o600, Data: spec})
	}
	if err := f.box.CopyIn(ctx, fbDir, files); err != nil {
		return fmt.Errorf("copying the patches into the container: %w", err)
	}
	return nil
}

// step runs a command that must succeed: a failure is the harness's (or
// the dataset's) problem, reported with the end of its output.
func (f *flow) step(ctx context.Context, what, dir string, argv ...string) error {
	res, err := f.exec(ctx, dir, 0, argv...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("%s: %s exited %d: %s", what, strings.Join(argv, " "), res.ExitCode, lastLines(res.Stdout, res.Stderr, 10))
	}
	return nil
}

// exec runs a command and writes it and its output to the log.
func (f *flow) exec(ctx context.Context, dir string, timeout time.Duration, argv ...string) (container.ExecResult, error) {
	return f.execEnv(ctx, dir, timeout, nil, argv...)
}

func (f *flow) execEnv(ctx context.Context, dir string, timeout time.Duration, env []string, argv ...string) (container.ExecResult, error) {
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	res, err := f.box.Exec(ctx, argv, container.ExecOptions{Timeout: timeout, WorkDir: dir, Env: env, MaxOutput: maxOutput})
	fmt.Fprintf(f.log, "$ (cd %s && %s)\n", dir, shellQuote(argv))
	if err != nil {
		fmt.Fprintf(f.log, "error: %v\n\n", err)
		return res, err
	}
	fmt.Fprintf(f.log, "exit %d in %.2f s%s\n", res.ExitCode, res.Duration.Seconds(), map[bool]string{true: " (timed out)"}[res.TimedOut])
	for _, out := range [][]byte{res.Stdout, res.Stderr} {
		if len(out) > 0 {
			f.log.Write(out)
			if out[len(out)-1] != '\n' {
				io.WriteString(f.log, "\n")
			}
		}
	}
	io.WriteString(f.log, "\n")
	return res, nil
}

// setUp reaches the starting point the agent had, and commits it so the
// apply chain can reset to it.
func (f *flow) setUp(ctx context.Context) error {
	what, script := f.setUpScript()
	return f.step(ctx, what, repoDir, "sh", "-c", script)
}

// setUpScript is setUp's one command (run in the repository's folder),
// and what it does, for an error.
func (f *flow) setUpScript() (what, script string) {
	in := f.t.Instance
	if f.agent {
		// From scratch: the tests run in the repository with the original
		// package masked (when the dataset says how) and sealed, so that
		// neither it nor its history holds the feature; the agent's code
		// goes in an empty folder of its own.
		// One command: each exec costs tens of milliseconds.
		script = ""
		if in.MaskPatch != "" {
			script = "git apply -v " + maskFile + "\nrm -f " + maskFile + "\n"
		}
		if f.ownImage {
			script = restoreScript + script
		}
		script = "set -e\n" + script + sealScript(false) + scratchScript +
			"mkdir -p " + agentDir + " && cd " + agentDir + " && git init -q && git commit -q --allow-empty -m start\n"
		return "masking the original package, sealing the repository and making the agent's empty folder", script
	}
	// One command, not one per step: each exec costs tens of milliseconds.
	script = "set -e\n"
	if f.ownImage {
		script += restoreScript
	}
	if f.masked {
		if in.Patch != "" {
			script += "git apply -v " + goldFile + "\n" // masking the feature
		}
		if files := f2pFiles(in); len(files) > 0 {
			script += "rm -f --" // the fail-to-pass test files
			for _, file := range files {
				script += " " + shSingleQuote(file)
			}
			script += "\n"
		}
	} else {
		// Reverse-applying the test patch and the gold patch reaches the base.
		if in.TestPatch != "" {
			script += "git apply -v -R " + testFile + "\n"
		}
		if in.Patch != "" {
			script += "git apply -v -R " + goldFile + "\n"
		}
	}
	script += sealScript(false) + scratchScript
	return "reaching the base and committing it as the repository's only commit", script
}

// Exit statuses of setUpAndApply's command that no apply method exits
// with: its set-up failed, or (level 1) putting the tests in place did.
const (
	setUpFailed = 97
	testsFailed = 98
)

// setUpAndApply is setUp, then apply, then at level 1 addTests, with as
// few execs as it can: each costs tens of milliseconds, and they were a
// good part of grading's overhead over a bare run of the same tests. The
// set-up, the apply chain's first method (which succeeds for nearly every
// prediction) and the tests run as one command, each part's failure told
// apart by its exit status; when the first method fails, the chain goes
// on as apply does, one exec a method. None of it runs the prediction's
// code: applying a diff runs nothing, and level 2's install waits for its
// turn (runFiles).
func (f *flow) setUpAndApply(ctx context.Context) (bool, error) {
	what, script := f.setUpScript()
	try, dir, verdict := f.firstTry()
	if try == nil {
		if !verdict || f.agent {
			if err := f.step(ctx, what, repoDir, "sh", "-c", script); err != nil {
				return false, err
			}
			return verdict, nil
		}
		// Nothing to apply (the empty baseline at level 1): the set-up
		// and the tests, in one command all the same.
		try = &patch.Command{Argv: []string{"true"}}
	}
	withTests := !f.agent && !try.LeavesRejects
	// Each part in a subshell whose status is read on the next line, not
	// left of "||": there sh would ignore the part's own "set -e".
	cmd := "(\n" + script + ")\n[ $? = 0 ] || exit " + strconv.Itoa(setUpFailed) + "\ncd " + shSingleQuote(dir) + " || exit " + strconv.Itoa(setUpFailed) + "\n" +
		shJoin(try.Argv) + "\nrc=$?\n"
	cmd += "case $rc in " + strconv.Itoa(setUpFailed) + "|" + strconv.Itoa(testsFailed) + ") rc=1 ;; esac\n"
	timeout := f.timeout(0)
	if withTests {
		cmd += "[ $rc = 0 ] || exit $rc\n(\n" + f.testsScript() + "\n)\n[ $? = 0 ] || exit " + strconv.Itoa(testsFailed) + "\nexit 0"
		timeout += f.timeout(f.lim.TestFile) + killAfter
	} else {
		cmd += "exit $rc"
	}
	res, err := f.exec(ctx, repoDir, timeout, "sh", "-c", cmd)
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	switch {
	case res.TimedOut:
		return false, fmt.Errorf("%s: did not finish in %s", what, timeout)
	case res.ExitCode == setUpFailed:
		return false, fmt.Errorf("%s: exited %d: %s", what, res.ExitCode, lastLines(res.Stdout, res.Stderr, 10))
	case res.ExitCode == testsFailed:
		f.applied(try.Method)
		f.placed = true
		return false, f.testsPlaced(1, append(append([]byte{}, res.Stdout...), res.Stderr...))
	case res.ExitCode == 0:
		f.applied(try.Method)
		if withTests {
			f.placed = true
		}
		return true, nil
	}
	if try.Method == goldUnmasked {
		return false, nil
	}
	return f.applyFrom(ctx, 1)
}

// goldUnmasked is firstTry's method for a masked instance's gold patch,
// which is its mask undone: it has no chain after it.
const goldUnmasked = "gold: the mask undone"

// firstTry is the apply's first command and the folder it runs in, or,
// when there is nothing to run, nil and the apply's verdict (an empty or
// refused prediction).
func (f *flow) firstTry() (*patch.Command, string, bool) {
	rep, t, dir := f.rep, f.t, f.applyDir()
	if t.Gold && f.masked && !f.agent {
		return &patch.Command{Method: goldUnmasked, Argv: []string{"git", "apply", "-v", "-R", maskedGold}}, dir, false
	}
	raw := t.Prediction.Patch
	if patch.Empty(raw) {
		// Nothing to apply: the tests run on the base as it is, which is
		// what an empty prediction means (the empty baseline). From
		// scratch, nothing was built: nothing to test.
		rep.PatchEmpty = true
		rep.PatchApplied = !f.agent
		return nil, dir, rep.PatchApplied
	}
	if err := patch.Check(raw, patch.Limits{}); err != nil {
		rep.PatchRefused = err.Error()
		fmt.Fprintf(f.log, "prediction refused: %v\n\n", err)
		return nil, dir, false
	}
	c := patch.ApplyCommands(predFile)[0]
	return &c, dir, false
}

// applyDir is the folder the prediction applies in: the repository, or
// at level 2 the agent's own folder.
func (f *flow) applyDir() string {
	if f.agent {
		return agentDir
	}
	return repoDir
}

// applied records that the prediction applied by method ("": there was
// nothing to apply).
func (f *flow) applied(method string) {
	f.rep.PatchApplied = true
	if method == "" {
		return
	}
	if method == goldUnmasked {
		f.rep.ApplyMethod = bench.ApplyMethods[0]
		f.countFiles(patchOf([]byte(f.t.Instance.Patch)))
		return
	}
	f.rep.ApplyMethod = method
	f.countFiles(patchOf(f.t.Prediction.Patch))
}

// apply applies the prediction through the apply chain, resetting the tree
// between tries, and says whether the tests should run. A command that
// fails leaves the prediction unapplied, except when its container or
// engine went away (container.ErrLost): that is returned, for the run to
// evaluate the attempt again, and is not a verdict on the prediction.
func (f *flow) apply(ctx context.Context) (bool, error) {
	try, dir, verdict := f.firstTry()
	if try == nil {
		return verdict, nil
	}
	if try.Method == goldUnmasked {
		res, err := f.exec(ctx, dir, 0, try.Argv...)
		if lost(err) {
			return false, fmt.Errorf("applying the gold patch: %w", err)
		}
		if err != nil || res.ExitCode != 0 {
			return false, nil
		}
		f.applied(try.Method)
		return true, nil
	}
	return f.applyFrom(ctx, 0)
}

// applyFrom runs the apply chain from its method from on (the methods
// before it failed), and says whether one applied the prediction.
func (f *flow) applyFrom(ctx context.Context, from int) (bool, error) {
	dir := f.applyDir()
	for i, c := range patch.ApplyCommands(predFile) {
		if i < from {
			continue
		}
		if i > 0 {
			// A failed try may leave part of its change behind.
			if _, err := f.exec(ctx, dir, 0, patch.ResetCommand("")...); err != nil {
				if lost(err) {
					return false, fmt.Errorf("resetting the tree between apply methods: %w", err)
				}
				return false, nil
			}
		}
		res, err := f.exec(ctx, dir, 0, c.Argv...)
		if lost(err) {
			return false, fmt.Errorf("applying the prediction (%s): %w", c.Method, err)
		}
		if err != nil {
			return false, nil
		}
		if res.ExitCode != 0 {
			continue
		}
		if c.LeavesRejects {
			// patch(1) can leave hunks it could not place in .rej files.
			ls, err := f.exec(ctx, dir, 0, patch.LeftoversCommand()...)
			if lost(err) {
				return false, fmt.Errorf("looking for rejected hunks: %w", err)
			}
			if err != nil || len(patch.Leftovers(ls.Stdout, patchOf(f.t.Prediction.Patch))) > 0 {
				continue
			}
		}
		f.applied(c.Method)
		return true, nil
	}
	fmt.Fprintf(f.log, "the prediction did not apply with any method\n\n")
	return false, nil
}

// lost says whether err is the loss of the container or its engine.
func lost(err error) bool { return errors.Is(err, container.ErrLost) }

// countFiles records the files a patch touches and, against the gold
// patch, the share of the gold patch's files it touched.
func (f *flow) countFiles(p *patch.Patch) {
	if p == nil {
		return
	}
	f.rep.FilesChanged = len(patch.Files(p))
	if gold := patchOf([]byte(f.t.Instance.Patch)); gold != nil && len(patch.Files(gold)) > 0 && !f.agent {
		r := patch.FileRecall(p, gold)
		f.rep.FileRecall = &r
	}
}

func patchOf(raw []byte) *patch.Patch {
	p, err := patch.Parse(raw)
	if err != nil {
		return nil
	}
	return p
}

// testsScript puts the instance's tests in place, as root in the
// repository. Level 2: the prediction is installed by the tests' user (its
// build runs its code), whose processes are then killed, then the test
// patch goes on. Level 1: the guard puts every test file and piece of
// pytest infrastructure back as the base has it (the prediction's are
// removed), so an agent cannot edit what grades it; then the test patch
// goes on. Exit 0: in place; 1 (level 2): the install failed, and the
// tests run and fail; else the harness's own step failed. Level 1 runs it
// when staging (addTests: none of it is the prediction's code); level 2's
// first pytest run runs it before pytest in the same command (runFiles),
// one exec fewer at the prediction's turn.
func (f *flow) testsScript() string {
	in := f.t.Instance
	if f.agent {
		tests := "true"
		if in.TestPatch != "" {
			tests = "git -C " + repoDir + " apply -v " + testFile + " && rm -f " + testFile
		}
		if f.canaries != nil {
			tests += " && " + f.canaryCommand()
		}
		// The install has the time of a test file; its own timeout, so
		// that the tests are put in place after it all the same. It is
		// the pip install the statement announces, or its result without
		// pip's start-up where that is sure (internal/pyinstall).
		pip := append([]string{"timeout", "-k", "5s", strconv.Itoa(int(max(f.timeout(f.lim.TestFile).Seconds(), 1))) + "s"},
			asTestUser(pyinstall.ArgvPython(f.python, installer, agentDir, agentSite)...)...)
		return `cd ` + agentDir + ` && chown -R -h ` + testUser + ` ` + agentDir + ` || exit 3
if ` + shJoin(pip) + `; then rc=0; else rc=1; fi
` + shSingleQuote(f.python) + ` -I ` + runner + ` --kill-user ` + testUser + ` || exit 3
` + tests + ` || exit 3
exit $rc`
	}
	_, files, _ := expected(in, false) // every test file, fail-to-pass and pass-to-pass
	if tp := patchOf([]byte(in.TestPatch)); tp != nil {
		files = append(files, testPatchFiles(tp)...)
	}
	script := "set -e\n" + shSingleQuote(f.python) + " -I " + guard + " " + repoDir
	for _, file := range files {
		script += " " + shSingleQuote(file)
	}
	script += "\n"
	if in.TestPatch != "" {
		if f.masked {
			script += "git apply -v -R " + testFile + "\n"
		} else {
			script += "git apply -v " + testFile + "\n"
		}
	}
	script += "rm -f " + testFile + "\n"
	if f.canaries != nil {
		script += f.canaryCommand() + "\n"
	}
	return script
}

// canaryCommand renames the fail-to-pass tests and adds their canaries,
// as root, once the tests are in place; the script's output goes where
// only root reads it.
func (f *flow) canaryCommand() string {
	return "(cd " + repoDir + " && " + shSingleQuote(f.python) + " -I " + canaryScript + " " + canarySpecFile + " " + outDir + "/" + canaryOut + ") && rm -f " + canarySpecFile
}

// testsPlaced reads testsScript's exit status (and output, for an error):
// level 2's install result, or the harness's failure.
func (f *flow) testsPlaced(code int, out []byte) error {
	if f.agent {
		ok := code == 0
		f.rep.InstallOK = &ok
		if code == 0 || code == 1 {
			return nil
		}
		return fmt.Errorf("installing the prediction as agent_code and putting the level 2 tests in place: exited %d: %s", code, lastLines(out, nil, 10))
	}
	if code != 0 {
		return fmt.Errorf("putting the tests and pytest's configuration back as the dataset has them: exited %d: %s", code, lastLines(out, nil, 10))
	}
	return nil
}

// addTests runs testsScript as a command of its own: level 1's, staged;
// level 2's when no test is to run; and for tests that look inside the
// container before pytest starts.
func (f *flow) addTests(ctx context.Context) error {
	timeout := f.timeout(f.lim.TestFile) + killAfter
	res, err := f.exec(ctx, repoDir, timeout, "sh", "-c", f.testsScript())
	if err != nil {
		return fmt.Errorf("putting the tests in place: %w", err)
	}
	if res.TimedOut {
		return fmt.Errorf("putting the tests in place: did not finish in %s", timeout)
	}
	f.placed = true
	return f.testsPlaced(res.ExitCode, append(res.Stdout, res.Stderr...))
}

// Where the first pytest run's command leaves testsScript's output and
// exit status: in the harness's folder, which the tests' user cannot
// write, read back with the tests' outputs.
const (
	testsLog    = "tests-placed.log"
	testsStatus = "tests-placed.status"
	// killAfter is the time the install's timeout gives it after SIGTERM.
	killAfter = 5 * time.Second
)

// withTests wraps the argv of the first pytest run so that testsScript
// runs before it in the same command; pytest starts only when the tests
// are in place (exit 0, or 1 for level 2's failed install).
func (f *flow) withTests(argv []string) []string {
	ok := "0"
	if f.agent {
		ok = "0|1"
	}
	script := "(\n" + f.testsScript() + "\n) >" + outDir + "/" + testsLog + " 2>&1\nrc=$?\necho $rc >" + outDir + "/" + testsStatus + `
case $rc in ` + ok + `) exec "$@" ;; esac
exit 3`
	return append([]string{"sh", "-c", script, "sh"}, argv...)
}

// timeout is d, or the default of a command without one.
func (f *flow) timeout(d time.Duration) time.Duration {
	if d <= 0 {
		return 10 * time.Minute
	}
	return d
}

// testPatchFiles are the paths a test patch touches, old and new.
func testPatchFiles(p *patch.Patch) []string {
	seen := map[string]bool{}
	var out []string
	for _, fl := range p.Files {
		for _, name := range []string{fl.OldPath, fl.NewPath} {
			if name != "" && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}

// testFileOf is the file a test id names: the part before "::", or the id
// itself when it names a whole file (FeatureBench lists test files).
func testFileOf(id string) string {
	if i := strings.Index(id, "::"); i >= 0 {
		return id[:i]
	}
	return id
}

// withoutFiles is the git diff raw without the blocks that touch one of
// files (by either of their names).
func withoutFiles(raw []byte, files []string) []byte {
	drop := map[string]bool{}
	for _, f := range files {
		drop[f] = true
	}
	// Each block parsed alone: its header lines name its file.
	var blocks []string
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if strings.HasPrefix(line, "diff --git ") || len(blocks) == 0 {
			blocks = append(blocks, "")
		}
		blocks[len(blocks)-1] += line
	}
	var out []byte
	for _, b := range blocks {
		keep := true
		if p := patchOf([]byte(b)); p != nil {
			for _, fl := range p.Files {
				if drop[fl.OldPath] || drop[fl.NewPath] {
					keep = false
				}
			}
		}
		if keep {
			out = append(out, b...)
		}
	}
	return out
}

// f2pFiles are the test files of the instance's FAIL_TO_PASS tests.
func f2pFiles(in *bench.Instance) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range in.FailToPass {
		if f := testFileOf(id); !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// runTests runs the instance's tests: first every test file in one pytest
// process (the fail-to-pass files first), which saves an interpreter
// start per file; a file that cannot be imported fails only its own tests
// (--continue-on-collection-errors). When that process did not finish (it
// crashed or timed out), each file whose tests got no outcome runs again
// in a process of its own, so one hanging test costs only its own file.
func (f *flow) runTests(ctx context.Context) error {
	byFile, order, kind := expected(f.t.Instance, f.agent)
	if len(order) == 0 {
		if f.placed {
			return nil
		}
		return f.addTests(ctx)
	}
	timeout := time.Duration(len(order)) * f.lim.TestFile
	if !f.placed && timeout > 0 {
		timeout += f.timeout(f.lim.TestFile) + killAfter // the install, first
	}
	report, err := f.runFiles(ctx, len(f.rep.Runs)+1, order, byFile, kind, timeout)
	if err != nil {
		return err
	}
	if report.Finished && !report.TimedOut || len(f.unverified()) > 0 {
		// An unverified run is not run again here: in a fresh container.
		return nil
	}
	for _, file := range order {
		settled := true
		for _, id := range byFile[file] {
			if st := f.rep.Tests[id].Status; st == string(pytest.StatusMissing) || st == string(pytest.StatusTimeout) || st == "" {
				settled = false
			}
		}
		if settled {
			continue
		}
		if _, err := f.runFiles(ctx, len(f.rep.Runs)+1, []string{file}, byFile, kind, f.lim.TestFile); err != nil {
			return err
		}
	}
	return nil
}

// runFiles runs test files in one pytest process and records the outcomes
// of their expected ids. The try's first run puts the tests in place
// before pytest starts, in the same command, unless they are (level 1:
// staged), and it reads the canary script's output.
func (f *flow) runFiles(ctx context.Context, n int, files []string, byFile map[string][]string, kind map[string]string, timeout time.Duration) (*pytest.Report, error) {
	name := fmt.Sprintf("%02d-%s", n, sanitize(files[0]))
	if len(files) > 1 {
		name = fmt.Sprintf("%02d-all", n)
	}
	opts := pytest.RunOptions{
		Python:    f.python,
		Root:      repoDir,
		File:      files[0],
		JUnitXML:  junitDir + "/" + name + ".xml",
		JSONL:     outDir + "/" + name + ".jsonl",
		Timeout:   f.lim.Test,
		PluginDir: pluginDir,
		Args:      append([]string{"--continue-on-collection-errors"}, f.args...),
		Runner:    runner,
		User:      testUser,
		// Written by the tests' user in the bounded /tmp, copied by root.
		CopyJUnitTo: outDir + "/" + name + ".xml",
		Audit:       true,
	}
	if f.agent {
		opts.PythonPath = []string{agentSite}
	}
	argv := pytest.Command(opts)
	argv = append(argv, files[1:]...)
	first := !f.placed
	if first {
		argv = f.withTests(argv)
	}
	res, err := f.execEnv(ctx, repoDir, timeout, pytest.Env(opts), argv...)
	if err != nil {
		return nil, fmt.Errorf("running the tests: %w", err)
	}
	outs, err := f.box.CopyOut(ctx, outDir, 64<<20)
	if err != nil {
		return nil, fmt.Errorf("reading the test outputs: %w", err)
	}
	if first {
		if err := f.placedTests(outs, res.TimedOut); err != nil {
			return nil, err
		}
		f.placed = true
	}
	var ids []string
	for _, file := range files {
		ids = append(ids, byFile[file]...)
	}
	in := pytest.Input{Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode, TimedOut: res.TimedOut}
	for _, o := range outs {
		switch path.Base(o.Path) {
		case name + ".xml":
			in.JUnitXML = o.Data
		case name + ".jsonl":
			in.JSONL = o.Data
		case canaryOut:
			if f.canaries == nil || f.mapping != nil {
				continue
			}
			m, err := canary.ParseMapping(o.Data)
			if err != nil {
				return nil, err
			}
			f.mapping, f.mapLog = m, name
			f.files[name+"."+canaryOut] = o.Data
		}
	}
	if f.canaries != nil && f.mapping == nil {
		return nil, fmt.Errorf("the canary script left no %s", canaryOut)
	}
	ids2 := f.mapping.Ids(ids)
	in.Expected = ids2.Expected
	f.files[name+".stdout"] = res.Stdout
	f.files[name+".stderr"] = res.Stderr
	if in.JUnitXML != nil {
		f.files[name+".xml"] = in.JUnitXML
	}
	if in.JSONL != nil {
		f.files[name+".jsonl"] = in.JSONL
	}
	report, integ, err := outcomes(in)
	if err != nil {
		return nil, fmt.Errorf("reading the outcomes of %s: %w", strings.Join(files, ", "), err)
	}
	run := FileRun{Files: files, Log: name, ExitCode: res.ExitCode, TimedOut: res.TimedOut,
		Seconds: res.Duration.Seconds(), Pytest: report.Seconds, Try: f.try, Canaries: f.mapLog, Unverified: integ.Unverified}
	var notes []string
	for _, d := range report.Disagreements {
		notes = append(notes, fmt.Sprintf("%s: JUnit %s, summary %s", d.ID, d.JUnit, d.Summary))
	}
	run.Note = strings.Join(append(notes, report.Notes...), "; ")
	f.rep.Runs = append(f.rep.Runs, run)
	f.rep.PytestSeconds += report.Seconds
	record(f.rep, report, integ, kind, ids2)
	return report, nil
}

// placedTests reads, from the first run's outputs, how putting the tests
// in place went, and logs its output.
func (f *flow) placedTests(outs []container.File, timedOut bool) error {
	var log, status []byte
	for _, o := range outs {
		switch o.Path {
		case testsLog:
			log = o.Data
		case testsStatus:
			status = o.Data
		}
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(status)))
	if status == nil || err != nil {
		if timedOut {
			return fmt.Errorf("putting the tests in place: did not finish in time: %s", lastLines(log, nil, 10))
		}
		return fmt.Errorf("putting the tests in place: no exit status (%q): %s", status, lastLines(log, nil, 10))
	}
	fmt.Fprintf(f.log, "putting the tests in place (before pytest, in the command above): exit %d\n", code)
	if len(log) > 0 {
		f.log.Write(log)
		if log[len(log)-1] != '\n' {
			io.WriteString(f.log, "\n")
		}
	}
	io.WriteString(f.log, "\n")
	return f.testsPlaced(code, log)
}

// outcomes reads one pytest run's outcomes and whether they can be
// believed.
func outcomes(in pytest.Input) (*pytest.Report, pytest.Integrity, error) {
	report, err := pytest.Parse(in)
	if err != nil {
		return nil, pytest.Integrity{}, err
	}
	return report, pytest.Verify(in, report), nil
}

// Failure modes the harness itself gives.
const (
	// GraderTampering: pytest's machinery changed during the run, or the
	// channels that report outcomes disagree (see pytest.Verify).
	GraderTampering = "GraderTampering"
	// Unverified: a pass reported after the plugin's last intact check
	// (the run died before the next one): not counted.
	Unverified = "Unverified"
	// DiskLimit: the tests filled the space they may write to.
	DiskLimit = "DiskLimit"
)

// record grades the expected ids of one pytest run into rep's tests (by
// their dataset ids), its canaries, its audit records and its tampering
// into rep.
func record(rep *Report, report *pytest.Report, integ pytest.Integrity, kind map[string]string, ids canary.Run) {
	rep.Tampering = append(rep.Tampering, integ.Problems...)
	rep.DiskLimit = rep.DiskLimit || integ.DiskFull
	for _, a := range integ.Audit {
		if len(rep.Audit) < maxAudit {
			rep.Audit = append(rep.Audit, a)
		}
	}
	for _, o := range report.Outcomes {
		if twin, ok := ids.Canaries[o.ID]; ok {
			rep.Canaries = append(rep.Canaries, CanaryResult{ID: o.ID, Twin: twin, Status: string(o.Status)})
			continue
		}
		id := ids.Back[o.ID]
		k := kind[id]
		passed := pytest.Passed(o.Status)
		if k == "P2P" {
			passed = pytest.Maintained(o.Status)
		}
		tr := TestResult{Kind: k, Status: string(o.Status), Passed: passed, ExcType: pytest.FailureMode(o),
			Message: o.Message, Seconds: o.Seconds}
		if passed && (!integ.Trusted(o.ID) || len(integ.Unverified) > 0) {
			tr.Status, tr.Passed, tr.ExcType = string(pytest.StatusMissing), false, Unverified
		}
		rep.Tests[id] = tr
	}
}

// maxAudit bounds the audit records a report keeps.
const maxAudit = 200

// expected lists, by test file, the ids a flow runs, and each id's kind.
func expected(in *bench.Instance, agent bool) (byFile map[string][]string, order []string, kind map[string]string) {
	byFile, kind = map[string][]string{}, map[string]string{}
	add := func(ids []string, k string) {
		for _, id := range ids {
			kind[id] = k
			file := testFileOf(id)
			if byFile[file] == nil {
				order = append(order, file)
			}
			byFile[file] = append(byFile[file], id)
		}
	}
	add(in.FailToPass, "F2P")
	if !agent {
		add(in.PassToPass, "P2P")
	}
	return byFile, order, kind
}

// FlowOf is the flow the dataset grades an instance with: "agent_code"
// for level 2 built from scratch, else "repo".
func FlowOf(ds *bench.Dataset, in *bench.Instance) string {
	if in.Level == 2 && ds.Level2OrDefault() == bench.Level2AgentCode {
		return "agent_code"
	}
	return "repo"
}

// Regrade recomputes an attempt's verdict from its logs: each test file's
// raw output (files, by the names the run saved them under) is parsed and
// graded again, as the run did. A results.jsonl line that differs from
// what Regrade gives was not produced from these logs. The level, flow and
// test lists are the dataset's: a report that claims another level or flow
// (agent_code skips the pass-to-pass tests) is refused, not believed.
func Regrade(ds *bench.Dataset, in *bench.Instance, rep Report, files map[string][]byte) (*Report, error) {
	if rep.InstanceID != in.InstanceID {
		return nil, fmt.Errorf("the report is of instance %s, not %s", rep.InstanceID, in.InstanceID)
	}
	if rep.Level != in.Level {
		return nil, fmt.Errorf("the report claims level %d; the dataset's instance is level %d", rep.Level, in.Level)
	}
	flow := FlowOf(ds, in)
	if rep.Flow != flow {
		return nil, fmt.Errorf("the report claims the %q flow; %s grades this instance with the %q flow", rep.Flow, ds.DisplayName(), flow)
	}
	out := rep
	out.Tests, out.Tampering, out.DiskLimit, out.Canaries, out.Audit = map[string]TestResult{}, nil, false, nil, nil
	out.Runs = slices.Clone(rep.Runs)
	byFile, _, kind := expected(in, flow == "agent_code")
	last := 1
	for _, run := range rep.Runs {
		last = max(last, run.Try)
	}
	for i, run := range rep.Runs {
		var ids []string
		for _, file := range run.Files {
			ids = append(ids, byFile[file]...)
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("the log names a run of %s, which holds none of the instance's tests", strings.Join(run.Files, ", "))
		}
		if files[run.Log+".stdout"] == nil {
			return nil, fmt.Errorf("the logs lack %s.stdout, the output of the run of %s", run.Log, strings.Join(run.Files, ", "))
		}
		var m *canary.Mapping
		switch {
		case run.Canaries != "":
			raw := files[run.Canaries+"."+canaryOut]
			if raw == nil {
				return nil, fmt.Errorf("the logs lack %s.%s, the canaries of the run of %s", run.Canaries, canaryOut, strings.Join(run.Files, ", "))
			}
			var err error
			if m, err = canary.ParseMapping(raw); err != nil {
				return nil, err
			}
		case len(in.Canaries) > 0:
			return nil, fmt.Errorf("the run of %s had no canaries; the dataset gives this instance %d places for them", strings.Join(run.Files, ", "), len(in.Canaries))
		}
		ids2 := m.Ids(ids)
		report, integ, err := outcomes(pytest.Input{
			JUnitXML: files[run.Log+".xml"], JSONL: files[run.Log+".jsonl"],
			Stdout: files[run.Log+".stdout"], Stderr: files[run.Log+".stderr"],
			ExitCode: run.ExitCode, TimedOut: run.TimedOut, Expected: ids2.Expected,
		})
		if err != nil {
			return nil, fmt.Errorf("reading the outcomes of %s: %w", strings.Join(run.Files, ", "), err)
		}
		out.Runs[i].Unverified = integ.Unverified
		if max(run.Try, 1) < last {
			// An earlier try: its tampering counts, its outcomes do not.
			out.Tampering = append(out.Tampering, integ.Problems...)
			continue
		}
		record(&out, report, integ, kind, ids2)
	}
	grade(&out, in)
	return &out, nil
}

// grade fills the report's verdict from the tests' outcomes.
func (f *flow) grade() { grade(f.rep, f.t.Instance) }

// grade fills a report's verdict from its tests' outcomes: resolved when
// the patch applied and every FAIL_TO_PASS and PASS_TO_PASS test passed
// (from scratch, FeatureBench runs only the FAIL_TO_PASS tests). Tests that
// never ran (the instance timed out first) time out.
func grade(rep *Report, in *bench.Instance) {
	agent := rep.Flow == "agent_code"
	rep.FailureModes, rep.Resolved, rep.FV, rep.RT, rep.PassedRate = nil, false, false, false, 0
	defer func() {
		// Why the agent stopped (a limit, its timeout, the upstream), as
		// eval infer recorded it, is one of the instance's failure modes.
		if m := rep.AgentFailure; m != "" && !slices.Contains(rep.FailureModes, m) {
			rep.FailureModes = append(rep.FailureModes, m)
			sort.Strings(rep.FailureModes)
		}
	}()
	rep.AuditFlags = auditFlags(rep, in)
	for _, p := range tampering(rep, in) {
		if !slices.Contains(rep.Tampering, p) {
			rep.Tampering = append(rep.Tampering, p)
		}
	}
	if len(rep.Tampering) > 0 {
		// Nothing this run reported can be believed.
		rep.FailureModes = []string{GraderTampering}
		return
	}
	if !rep.PatchApplied {
		rep.FailureModes = []string{"PatchApplyError"}
		if rep.PatchEmpty {
			rep.FailureModes = []string{"EmptyPatch"}
		}
		return
	}
	p2p := in.PassToPass
	if agent {
		p2p = nil
	}
	for _, set := range []struct {
		kind string
		ids  []string
	}{{"F2P", in.FailToPass}, {"P2P", p2p}} {
		for _, id := range set.ids {
			if _, ok := rep.Tests[id]; !ok {
				rep.Tests[id] = TestResult{Kind: set.kind, Status: Timeout, ExcType: "Timeout"}
			}
		}
	}
	passed := 0
	rep.FV, rep.RT = true, true
	modes := map[string]bool{}
	if rep.DiskLimit {
		// What the tests wrote filled the space they have: stopped there.
		modes[DiskLimit] = true
	}
	for _, id := range in.FailToPass {
		if t := rep.Tests[id]; t.Passed {
			passed++
		} else {
			rep.FV = false
			modes[orUnknown(t.ExcType)] = true
		}
	}
	for _, id := range p2p {
		if t := rep.Tests[id]; !t.Passed {
			rep.RT = false
			modes[orUnknown(t.ExcType)] = true
		}
	}
	if len(in.FailToPass) > 0 {
		rep.PassedRate = float64(passed) / float64(len(in.FailToPass))
	}
	rep.Resolved = rep.FV && rep.RT && !rep.DiskLimit
	for m := range modes {
		rep.FailureModes = append(rep.FailureModes, m)
	}
	sort.Strings(rep.FailureModes)
}

// tampering is what the canaries, the audit and the tries prove beyond
// the runs' own checks: a canary that passed beside the test it copies
// (the two expect different values: the outcome was read from the tests,
// or forged), the tests' code swapped or a test file opened by the
// prediction's code where the gold patch's code did neither, and a second
// try unverified like the first.
func tampering(rep *Report, in *bench.Instance) []string {
	var out []string
	for _, c := range rep.Canaries {
		if pytest.Passed(pytest.Status(c.Status)) && rep.Tests[c.Twin].Passed {
			out = append(out, fmt.Sprintf("canary %s, a copy of %s that expects another value, passed beside it", c.ID, c.Twin))
		}
	}
	for _, a := range rep.Audit {
		switch {
		case a.Kind == "test-file" && !slices.Contains(in.GoldAudit, a.Kind):
			out = append(out, fmt.Sprintf("the prediction's code (%s) opened the test file %s", a.At, a.Target))
		case a.Kind == "code-swap" && strings.HasPrefix(a.Target, "test ") && !slices.Contains(in.GoldAudit, a.Kind):
			out = append(out, fmt.Sprintf("the prediction's code (%s) replaced the code of the %s", a.At, a.Target))
		}
	}
	last, unverified := 1, 0
	for _, r := range rep.Runs {
		last = max(last, r.Try)
	}
	for _, r := range rep.Runs {
		if max(r.Try, 1) == last && len(r.Unverified) > 0 {
			unverified++
		}
	}
	if last >= 2 && unverified > 0 {
		out = append(out, fmt.Sprintf("unverified in a fresh container too (%d runs)", unverified))
	}
	return out
}

// auditFlags are the kinds of the report's audit records that the gold
// patch's runs did not make, sorted.
func auditFlags(rep *Report, in *bench.Instance) []string {
	var out []string
	for _, a := range rep.Audit {
		if !slices.Contains(in.GoldAudit, a.Kind) && !slices.Contains(out, a.Kind) {
			out = append(out, a.Kind)
		}
	}
	sort.Strings(out)
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "Unknown"
	}
	return s
}

// sanitize makes a test file's path a file name.
func sanitize(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 100 {
		s = s[len(s)-100:]
	}
	return s
}

// lastLines is the end of a command's output, for an error message.
func lastLines(stdout, stderr []byte, n int) string {
	out := strings.TrimSpace(string(stdout) + "\n" + string(stderr))
	lines := strings.Split(out, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// shSingleQuote quotes s for sh: nothing inside single quotes expands.
func shSingleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shJoin quotes every word of argv for the shell: a command line that
// runs argv, whatever its words hold.
func shJoin(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = shSingleQuote(a)
	}
	return strings.Join(parts, " ")
}

// shellQuote writes argv as a shell would read it back, for the log.
func shellQuote(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@+", r))
		}) < 0 {
			parts[i] = a
		} else {
			parts[i] = strconv.Quote(a)
		}
	}
	return strings.Join(parts, " ")
}

// AgentDir is the folder an agent works in on an instance: the
// repository, or for level 2 built from scratch the agent's own empty
// folder.
func AgentDir(ds *bench.Dataset, in *bench.Instance) string {
	if FlowOf(ds, in) == "agent_code" {
		return agentDir
	}
	return repoDir
}

// StartingPoint takes a started container (of the instance's
// environment image, or a layer on it) to the starting point an agent
// gets, with the very set-up grading makes: the base as the repository's
// only commit, nothing of the solution in it or its history; level 2
// built from scratch: the original package masked and sealed, and the
// agent's empty folder, with the repository closed to every user but root
// (the statement says the agent does not have its code, and its test
// files are the ones that grade). Nothing the harness brought stays (no
// gold patch, no test patch, no plugin). Each command goes to log. It
// returns the folder the agent works in (AgentDir).
func StartingPoint(ctx context.Context, box executor.Box, ds *bench.Dataset, in *bench.Instance, log io.Writer) (string, error) {
	f := newFlow(Task{Dataset: ds, Instance: in, Attempt: 1}, Limits{}, log)
	f.box = box
	if err := f.copyIn(ctx); err != nil {
		return "", err
	}
	if err := f.setUp(ctx); err != nil {
		return "", err
	}
	if err := f.step(ctx, "removing what the harness brought", "/", "rm", "-rf", fbDir, scratchDir); err != nil {
		return "", err
	}
	if f.agent {
		if err := f.step(ctx, "closing the repository, whose code a level 2 agent does not have", "/", "chmod", "700", repoDir); err != nil {
			return "", err
		}
	}
	return AgentDir(ds, in), nil
}

// DerivedCanaries reads, from a derivation run of the gold patch
// (Task.DeriveCanaries), the canary places grading may use on the instance
// (canary.Sound): rep is the attempt's report and files its test outputs.
func DerivedCanaries(in *bench.Instance, rep *Report, files map[string][]byte) ([]bench.Canary, error) {
	last := 1
	for _, r := range rep.Runs {
		last = max(last, r.Try)
	}
	var m *canary.Mapping
	for _, r := range rep.Runs {
		if max(r.Try, 1) == last && r.Canaries != "" {
			raw := files[r.Canaries+"."+canaryOut]
			if raw == nil {
				return nil, fmt.Errorf("the outputs lack %s.%s", r.Canaries, canaryOut)
			}
			var err error
			if m, err = canary.ParseMapping(raw); err != nil {
				return nil, err
			}
			break
		}
	}
	if m == nil {
		return nil, fmt.Errorf("the run of %s added no canaries", in.InstanceID)
	}
	status := map[string]string{}
	for _, c := range rep.Canaries {
		status[c.ID] = c.Status
	}
	run := m.Ids(in.FailToPass)
	return canary.Sound(run,
		func(id string) bool { return rep.Tests[id].Passed },
		func(id string) bool {
			switch pytest.Status(status[id]) {
			case pytest.StatusFailed, pytest.StatusError:
				return true
			}
			return false
		}), nil
}
