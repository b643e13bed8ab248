package collect

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/featbench/featbench/internal/trace"
)

// traceOut is one test file's traced run.
type traceOut struct {
	Path    string       `json:"path"`
	OK      bool         `json:"ok"`
	Reason  string       `json:"reason,omitempty"`
	Seconds float64      `json:"seconds"` // the traced run's wall time
	Graph   *trace.Graph `json:"graph,omitempty"`
}

// candidate is a fail-to-pass test file on its way to becoming instances.
type candidate struct {
	File    string
	Tests   []string // its passed tests: the FAIL_TO_PASS list
	Created string
	Drops   []Drop // why it, or one level of it, stopped
	dead    bool
	lost    map[int]bool // levels dropped

	classify classifyOut
	p2p      p2pOut
	walk     walkOut
	mask     maskOut
	verify   verifyOut
	stmt     statementsOut
}

// isTestPath reports whether a repository file is test code: in a tests
// folder, named test_*.py or *_test.py, or a conftest.py. Such code is
// never extracted.
func isTestPath(p string) bool {
	base := path.Base(p)
	if base == "conftest.py" || strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") {
		return true
	}
	for _, part := range strings.Split(path.Dir(p), "/") {
		if part == "tests" || part == "test" || part == "testing" {
			return true
		}
	}
	return false
}

// pools picks the fail-to-pass candidates (fully passing files with enough
// test points, most test points first, at most max_f2p_files) and the
// pass-to-pass pool (the candidates and other fully passing files, at most
// max_p2p_files).
func (r *repoRun) pools() (cands, pool []string) {
	var passing []string
	for f, o := range r.runs {
		if o.OK {
			passing = append(passing, f)
		}
	}
	sort.Slice(passing, func(i, j int) bool {
		a, b := len(r.runs[passing[i]].Passed), len(r.runs[passing[j]].Passed)
		if a != b {
			return a > b
		}
		return passing[i] < passing[j]
	})
	inCands := map[string]bool{}
	for _, f := range passing {
		if len(r.runs[f].Passed) >= r.rc.MinTestPoints && (r.rc.MaxF2PFiles == 0 || len(cands) < r.rc.MaxF2PFiles) {
			cands = append(cands, f)
			inCands[f] = true
		}
	}
	pool = append(pool, cands...)
	for _, f := range passing {
		if inCands[f] {
			continue
		}
		if r.rc.MaxP2PFiles > 0 && len(pool) >= r.rc.MaxP2PFiles && len(pool) >= len(cands) {
			break
		}
		pool = append(pool, f)
	}
	sort.Strings(cands)
	sort.Strings(pool)
	return cands, pool
}

// stageTrace traces every file of the pool.
func (r *repoRun) stageTrace(ctx context.Context) error {
	cands, pool := r.pools()
	var mu sync.Mutex
	r.graphs = map[string]traceOut{}
	err := r.forEach(ctx, pool, "trace.log", func(ctx context.Context, get func() (*box, error), file string) error {
		d := digest("trace", recipe, r.env.Image, file, r.rc.TraceTimeout, trace.Script())
		out, made, err := memo(r, d, file, get, func(b *box) (traceOut, error) { return r.traceFile(ctx, b, file) })
		if err != nil {
			return err
		}
		if made && r.o.Verbose {
			r.logf("traced %s: %d nodes in %.1f s %s", file, nodeCount(out), out.Seconds, out.Reason)
		}
		mu.Lock()
		r.graphs[file] = out
		mu.Unlock()
		return nil
	})
	if err != nil {
		return err
	}
	r.cands = nil
	created := map[string]string{}
	for _, f := range r.disc.Files {
		created[f.Path] = f.Created
	}
	traced := 0
	for _, f := range cands {
		c := &candidate{File: f, Tests: r.runs[f].Passed, Created: created[f]}
		if g := r.graphs[f]; !g.OK {
			r.drop(c, StageTrace, 0, "the traced run failed: "+g.Reason)
		} else {
			traced++
		}
		r.cands = append(r.cands, c)
	}
	r.res.report.Candidates = len(cands)
	r.res.report.Traced = traced
	r.logf("traced %d files: %d candidates, %d of them traced", len(pool), len(cands), traced)
	return nil
}

func nodeCount(o traceOut) int {
	if o.Graph == nil {
		return 0
	}
	return len(o.Graph.Nodes)
}

// traceFile runs one test file under the tracer.
func (r *repoRun) traceFile(ctx context.Context, b *box, file string) (traceOut, error) {
	out := traceOut{Path: file}
	argv, err := trace.Command(trace.Options{
		Script: fbDir + "/" + trace.ScriptName, Root: repoDir, Out: outDir + "/trace.json", Tests: []string{file},
		Args: []string{"-p", "no:cacheprovider", "-q", "--rootdir=" + repoDir, file},
	})
	if err != nil {
		return out, err
	}
	res, err := b.exec(ctx, repoDir, r.tout.Trace, []string{"PYTHONDONTWRITEBYTECODE=1"}, argv...)
	if err != nil {
		return out, fmt.Errorf("tracing: %w", err)
	}
	out.Seconds = res.Duration.Seconds()
	if res.TimedOut {
		out.Reason = fmt.Sprintf("timed out after trace_timeout (%s)", r.rc.TraceTimeout)
		return out, nil
	}
	if res.ExitCode != 0 {
		// The line that names the error; the whole output is in the
		// stage's log, as every command's is.
		out.Reason = fmt.Sprintf("exit %d: %s (its output is in trace.log)", res.ExitCode, firstErrorLine(string(res.Stdout)+"\n"+string(res.Stderr)))
		return out, nil
	}
	files, err := b.c.CopyOut(ctx, outDir+"/trace.json", 256<<20)
	if err != nil || len(files) != 1 {
		out.Reason = fmt.Sprintf("no graph written: %v", err)
		return out, nil
	}
	g, err := trace.Decode(bytes.NewReader(files[0].Data))
	if err != nil {
		out.Reason = err.Error()
		return out, nil
	}
	out.OK, out.Graph = true, g
	return out, nil
}
