package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/infer"
	"github.com/featbench/featbench/internal/meter"
)

// newProgress shows a run's progress: a bar with the ETA and the resolved
// count on a terminal, a line per instance elsewhere (CI logs). status,
// when not nil, adds the executor's state (a swarm's nodes and tasks in
// flight).
func newProgress(w io.Writer, status func() string) evaluate.Progress {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &barProgress{w: w, status: status}
	}
	return &lineProgress{w: w, status: status}
}

type barProgress struct {
	status   func() string
	w        io.Writer
	mu       sync.Mutex
	bar      *progressbar.ProgressBar
	resolved int
	skipped  int
}

func (p *barProgress) Start(total int) {
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription("resolved 0"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
	)
}

func (p *barProgress) Done(rep *evaluate.Report, skipped bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rep.Resolved {
		p.resolved++
	}
	if skipped {
		p.skipped++
	}
	desc := fmt.Sprintf("resolved %d", p.resolved)
	if p.skipped > 0 {
		desc += fmt.Sprintf(" (%d done before)", p.skipped)
	}
	if p.status != nil {
		desc += "; " + p.status()
	}
	p.bar.Describe(desc)
	_ = p.bar.Add(1)
}

func (p *barProgress) Finish() { _ = p.bar.Finish() }

// lineProgress writes a line per instance and attempt.
type lineProgress struct {
	status      func() string
	w           io.Writer
	mu          sync.Mutex
	total, done int
	resolved    int
	start       time.Time
}

func (p *lineProgress) Start(total int) { p.total, p.start = total, time.Now() }

func (p *lineProgress) Done(rep *evaluate.Report, skipped bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if rep.Resolved {
		p.resolved++
	}
	verdict := "unresolved"
	switch {
	case rep.Error != "":
		verdict = "error: " + rep.Error
	case rep.Resolved:
		verdict = "resolved"
	case !rep.PatchApplied:
		verdict = "not applied"
	}
	if skipped {
		verdict += " (done before)"
	}
	eta := ""
	if p.done < p.total {
		left := time.Duration(float64(time.Since(p.start)) / float64(p.done) * float64(p.total-p.done))
		eta = fmt.Sprintf(", about %s left", left.Round(time.Second))
	}
	if rep.Retried != "" {
		verdict += " (retried: " + lostWhat(rep.Retried) + ")"
	}
	state := ""
	if p.status != nil {
		state = "; " + p.status()
	}
	fmt.Fprintf(p.w, "[%d/%d] %s attempt %d: %s (%.1f s); resolved so far %d%s%s\n",
		p.done, p.total, rep.InstanceID, rep.Attempt, verdict, rep.Seconds, p.resolved, eta, state)
}

func (p *lineProgress) Finish() {}

// newInferProgress shows an infer run's progress: a bar with the ETA,
// tokens and cost so far on a terminal, a line per instance elsewhere.
func newInferProgress(w io.Writer, status func() string) infer.Progress {
	p := &inferProgress{w: w, status: status}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = true
	}
	return p
}

type inferProgress struct {
	w           io.Writer
	status      func() string // the executor's state (a swarm's), or nil
	bar         bool
	mu          sync.Mutex
	b           *progressbar.ProgressBar
	total, done int
	ran         int // not skipped: what the ETA is measured on
	tin, tout   int64
	cost        float64
	failed      int
	unsaved     int
	start       time.Time
	// working is what each agent at work used so far, by instance.
	working map[string]meter.Totals
}

func (p *inferProgress) Start(total int) {
	p.total, p.start = total, time.Now()
	if p.bar {
		p.b = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
		)
	}
}

func (p *inferProgress) Done(rec *infer.Record, skipped bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.working, rec.InstanceID)
	p.done++
	if !skipped {
		p.ran++
	}
	// What was not saved is not counted: the next run does it again.
	if rec.Unsaved != "" {
		p.unsaved++
	} else {
		p.tin += rec.TokensIn
		p.tout += rec.TokensOut
		if rec.Cost != nil {
			p.cost += *rec.Cost
		}
		if rec.FailureMode != "" {
			p.failed++
		}
	}
	so := p.soFar()
	if p.bar {
		p.b.Describe(so)
		_ = p.b.Add(1)
		return
	}
	verdict := "done"
	switch {
	case rec.Unsaved != "":
		verdict = "not saved (" + rec.Unsaved + "): not done"
	case rec.FailureMode != "":
		verdict = rec.FailureMode
	}
	if skipped {
		verdict += " (done before)"
	}
	eta := ""
	if left := p.total - p.done; left > 0 && p.ran > 0 {
		eta = fmt.Sprintf(", about %s left", (time.Since(p.start) / time.Duration(p.ran) * time.Duration(left)).Round(time.Second))
	}
	fmt.Fprintf(p.w, "[%d/%d] %s: %s, %d turns, %d files (%.1f s); so far %s%s\n",
		p.done, p.total, rec.InstanceID, verdict, rec.Turns, rec.FilesChanged, rec.Seconds, so, eta)
}

// soFar is the run's totals so far, for a progress line.
func (p *inferProgress) soFar() string {
	so := fmt.Sprintf("tokens %s in, %s out, $%.4f; %d failed", short(p.tin), short(p.tout), p.cost, p.failed)
	if p.unsaved > 0 {
		so += fmt.Sprintf(", %d not saved", p.unsaved)
	}
	if len(p.working) > 0 {
		var tin, tout int64
		for _, t := range p.working {
			tin, tout = tin+t.TokensIn, tout+t.TokensOut
		}
		so += fmt.Sprintf("; %d at work (tokens %s in, %s out)", len(p.working), short(tin), short(tout))
	}
	if p.status != nil {
		so += "; " + p.status()
	}
	return so
}

// Working says what an agent at work did so far: a line of its own, or
// the bar's description.
func (p *inferProgress) Working(id string, t meter.Totals, elapsed time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.working == nil {
		p.working = map[string]meter.Totals{}
	}
	p.working[id] = t
	if p.bar {
		p.b.Describe(p.soFar())
		return
	}
	cost := fmt.Sprintf("$%.4f", t.Cost)
	if len(t.Unpriced) > 0 {
		cost = "cost unknown"
	}
	failing := ""
	if t.LastFailed {
		failing = "; its last model call failed: " + t.LastError
	}
	fmt.Fprintf(p.w, "  %s: at work for %s, %d turns, tokens %s in, %s out, %s%s\n",
		id, elapsed.Round(time.Second), t.Turns, short(t.TokensIn), short(t.TokensOut), cost, failing)
}

func (p *inferProgress) Finish() {
	if p.b != nil {
		_ = p.b.Finish()
	}
}

// short writes a token count as 12.3k or 4.5M.
func short(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// lostNode finds, in why an attempt was retried, the node a swarm lost:
// "node 7ewh3s95miyz (vm, unix:///run/featbench-swarm/node2.sock) was lost".
var lostNode = regexp.MustCompile(`node \S+( \([^)]*\))? was lost`)

// lostWhat says what a retried attempt lost, for its progress line:
// the node, when its retried says which.
func lostWhat(retried string) string {
	if m := lostNode.FindString(retried); m != "" {
		return m
	}
	return "its container was lost"
}
