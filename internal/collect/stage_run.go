package collect

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/pytest"
	"github.com/featbench/featbench/internal/trace"
)

// runOut is one test file's run on the complete project.
type runOut struct {
	Path     string           `json:"path"`
	ExitCode int              `json:"exit_code"`
	TimedOut bool             `json:"timed_out,omitempty"`
	Seconds  float64          `json:"seconds"`
	Counts   map[string]int   `json:"counts"` // tests by status
	Passed   []string         `json:"passed"` // ids of the passed tests
	Failing  []pytest.Outcome `json:"failing,omitempty"`
	// Tampering is what the harness's plugin saw the run change of
	// pytest's machinery (boltons' tests set sys.excepthook): grading
	// believes no outcome of such a run, so the file cannot be an
	// instance's test, fail-to-pass or pass-to-pass.
	Tampering []string `json:"tampering,omitempty"`
	// OK: the file passes fully (exit 0, every test passed or skipped,
	// at least one passed, nothing tampered with), as FeatureBench
	// requires of its candidates.
	OK bool `json:"ok"`
}

// forEach runs fn on each item with the configured number of workers, each
// with a container of its own, reset before each item. Items whose stored
// output is current are passed over by fn itself, without a container.
// An executor that knows its room (a swarm) admits the workers instead,
// one container each, as many as its free CPUs and memory hold
// (executor.Pool).
func (r *repoRun) forEach(ctx context.Context, items []string, logName string, fn func(ctx context.Context, b func() (*box, error), item string) error) error {
	pool := executor.NewPool(r.o.Executor, r.o.Config.Collect.Workers, r.lim)
	return pool.Shared(ctx, len(items), func() (func(context.Context, int, error) error, func()) {
		var bx *box
		get := func(ctx context.Context) (*box, error) {
			if bx == nil {
				var err error
				logPath := ""
				if logName != "" {
					logPath = r.w.file(logName)
				}
				bx, err = openBox(ctx, r.o.lease, r.env.Image, r.rc.Repository, r.lim, logPath)
				if err != nil {
					return nil, err
				}
				if err := bx.c.CopyIn(ctx, fbDir, scripts()); err != nil {
					return nil, fmt.Errorf("copying the scripts into the container: %w", err)
				}
			}
			if err := bx.reset(ctx); err != nil {
				return nil, err
			}
			return bx, nil
		}
		do := func(ctx context.Context, i int, lost error) error {
			it := items[i]
			if lost != nil {
				// The item's container went away with its node (a
				// swarm's): once more from the start, in a fresh one.
				// fn changes nothing shared before it succeeds.
				r.logf("%s: the container was lost, once more in a fresh one: %v", it, lost)
				if bx != nil {
					bx.close()
					bx = nil
				}
			}
			if err := fn(ctx, func() (*box, error) { return get(ctx) }, it); err != nil {
				return fmt.Errorf("%s: %w", it, err)
			}
			return nil
		}
		done := func() {
			if bx != nil {
				bx.close()
			}
		}
		return do, done
	})
}

// scripts are the files collection brings into a container.
func scripts() []container.File {
	return []container.File{
		{Path: "plugin/" + pytest.PluginFile, Mode: 0o644, Data: pytest.PluginSource()},
		{Path: trace.ScriptName, Mode: 0o644, Data: trace.Script()},
		{Path: maskScriptName, Mode: 0o644, Data: maskScript()},
		{Path: "out/.keep", Mode: 0o644},
	}
}

// runRecipe is the version of a run's verdict (2: a run that tampers
// with pytest's machinery does not pass).
const runRecipe = 2

// stageRun runs every discovered test file on the complete project.
func (r *repoRun) stageRun(ctx context.Context) error {
	files := map[string]testFile{}
	var items []string
	for _, f := range r.disc.Files {
		files[f.Path] = f
		items = append(items, f.Path)
	}
	var mu sync.Mutex
	r.runs = map[string]runOut{}
	done := 0
	err := r.forEach(ctx, items, "run.log", func(ctx context.Context, get func() (*box, error), file string) error {
		d := digest("run", recipe, runRecipe, r.env.Image, file, files[file].Tests, r.rc.TestFileTimeout)
		out, made, err := memo(r, d, file, get, func(b *box) (runOut, error) {
			return runFile(ctx, b, file, files[file].Tests, r.tout.TestFile)
		})
		if err != nil {
			return err
		}
		mu.Lock()
		r.runs[file] = out
		done++
		if made && r.o.Verbose {
			r.logf("run %d/%d %s: %s", done, len(items), file, passWord(out))
		}
		mu.Unlock()
		return nil
	})
	if err != nil {
		return err
	}
	n := 0
	for _, o := range r.runs {
		if o.OK {
			n++
		}
	}
	r.res.report.TestFiles = len(items)
	r.res.report.Passing = n
	r.logf("ran %d test files: %d pass fully", len(items), n)
	if n == 0 {
		return fmt.Errorf("no test file passes fully on the complete project (see %s)", r.w.file("run.log"))
	}
	return nil
}

func passWord(o runOut) string {
	if o.OK {
		return fmt.Sprintf("passed (%d tests, %.1f s)", len(o.Passed), o.Seconds)
	}
	if len(o.Tampering) > 0 {
		return fmt.Sprintf("not gradable (%s)", o.Tampering[0])
	}
	return fmt.Sprintf("not passing (exit %d, %v)", o.ExitCode, o.Counts)
}

// runFile runs one test file with the harness's pytest runner.
func runFile(ctx context.Context, b *box, file string, ids []string, timeout time.Duration) (runOut, error) {
	opts := pytest.RunOptions{
		Root: repoDir, File: file, JUnitXML: outDir + "/junit.xml", JSONL: outDir + "/results.jsonl",
		Classic: true, PluginDir: fbDir + "/plugin",
	}
	res, err := b.exec(ctx, repoDir, timeout, pytest.Env(opts), pytest.Command(opts)...)
	if err != nil {
		return runOut{}, fmt.Errorf("running pytest: %w", err)
	}
	in := pytest.Input{Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode, TimedOut: res.TimedOut, Expected: ids}
	files, err := b.c.CopyOut(ctx, outDir, 64<<20)
	if err != nil {
		return runOut{}, fmt.Errorf("reading pytest's reports: %w", err)
	}
	for _, f := range files {
		switch path.Base(f.Path) {
		case "junit.xml":
			in.JUnitXML = f.Data
		case "results.jsonl":
			in.JSONL = f.Data
		}
	}
	rep, err := pytest.Parse(in)
	if err != nil {
		return runOut{}, err
	}
	out := runOut{Path: file, ExitCode: res.ExitCode, TimedOut: res.TimedOut, Seconds: res.Duration.Seconds(), Counts: map[string]int{}}
	bad := 0
	for _, o := range rep.Outcomes {
		out.Counts[string(o.Status)]++
		switch o.Status {
		case pytest.StatusPassed:
			out.Passed = append(out.Passed, o.ID)
		case pytest.StatusSkipped, pytest.StatusXFailed:
		default:
			bad++
			if len(out.Failing) < 20 {
				o.Message = firstLine(o.Message)
				out.Failing = append(out.Failing, o)
			}
		}
	}
	sort.Strings(out.Passed)
	out.Tampering = pytest.Verify(in, rep).Problems
	out.OK = res.ExitCode == 0 && !res.TimedOut && bad == 0 && len(out.Passed) > 0 && len(out.Tampering) == 0
	return out, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
