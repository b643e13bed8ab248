package collect

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/mask"
)

// verifyRuns is how many times the gold patch must make every test pass:
// a flaky test is caught by a rerun.
const verifyRuns = 3

// verifyOut is a candidate's post-verification, per level.
type verifyOut struct {
	L1 *levelCheck `json:"l1,omitempty"`
	L2 *levelCheck `json:"l2,omitempty"`
}

// levelCheck is one level's post-verification.
type levelCheck struct {
	// EmptyRate is the share of fail-to-pass tests that pass with no
	// solution: on the masked codebase (level 1), with an empty agent_code
	// package (level 2). It must not pass the ceiling.
	EmptyRate float64 `json:"empty_rate"`
	// P2PKept: every pass-to-pass test passes on the masked codebase.
	P2PKept bool `json:"p2p_kept"`
	// GoldResolved counts the gold runs in which every test passed.
	GoldResolved int     `json:"gold_resolved"`
	GoldRuns     int     `json:"gold_runs"`
	Reason       string  `json:"reason,omitempty"` // why the level is dropped; "" when it passed
	Seconds      float64 `json:"seconds"`
	// Canaries are the canary places a derivation run of the gold patch
	// found sound, with which the gold runs then graded (internal/canary);
	// GoldAudit the kinds of audit records the gold runs made.
	Canaries  []bench.Canary `json:"canaries,omitempty"`
	GoldAudit []string       `json:"gold_audit,omitempty"`
}

// instanceID names a candidate's instance as FeatureBench does:
// owner__name[.commit8].stem.hash8.lvN, the hash of the test file's path.
func (r *repoRun) instanceID(c *candidate, level int) string {
	owner, name, _ := strings.Cut(r.rc.Repository, "/")
	id := owner + "__" + name
	if r.env.Commit != "" {
		id += "." + r.env.Commit[:8]
	}
	stem := strings.TrimSuffix(path.Base(c.File), ".py")
	return fmt.Sprintf("%s.%s.%s.lv%d", id, stem, digest(c.File)[:8], level)
}

// instance is a candidate's instance of a level, without its statement.
func (r *repoRun) instance(c *candidate, level int) *bench.Instance {
	in := &bench.Instance{
		InstanceID: r.instanceID(c, level), Repo: r.rc.Repository, BaseCommit: r.env.Commit, Level: level,
		Patch: c.mask.Patch, TestPatch: c.mask.TestPatch, FailToPass: c.Tests, ImageName: r.env.Image,
		CreatedAt: c.Created, TopObjects: c.mask.Tops,
	}
	for _, f := range c.p2p.Files {
		for _, id := range r.runs[f].Passed {
			if !slices.Contains(c.mask.P2PGone, id) {
				in.PassToPass = append(in.PassToPass, id)
			}
		}
	}
	if level == 2 {
		var vendor []mask.VendoredFile
		if c.mask.Result != nil {
			vendor = c.mask.Result.Level2Vendor
		}
		in.Patch = agentCodePackage(vendor)
		in.TestPatch = c.mask.TestPatchL2
		in.MaskPatch = c.mask.MaskPatch
		in.PassToPass = []string{}
	}
	lines, files, functions := c.mask.Lines, c.mask.Files, c.mask.Functions
	f2p, p2p := len(in.FailToPass), len(in.PassToPass)
	in.Lines, in.Files, in.Functions, in.F2PTestPoints, in.P2PTestPoints = &lines, &files, &functions, &f2p, &p2p
	return in
}

// verifyDataset is the manifest collection's instances are evaluated
// under: the complete project as the source, level 2 from scratch.
var verifyDataset = &bench.Dataset{Manifest: bench.Manifest{Layout: bench.LayoutComplete, Level2: bench.Level2AgentCode}}

// stageVerify checks each masked candidate in fresh containers with the
// evaluation harness: what an agent starts from must fail the fail-to-pass
// tests (at most the ceiling passes) and keep the pass-to-pass ones, and
// the gold patch must make every test pass, verifyRuns times.
func (r *repoRun) stageVerify(ctx context.Context) error {
	items, byFile := r.alive()
	lim, err := evaluate.ConfigLimits(r.o.Config.Eval)
	if err != nil {
		return err
	}
	if err := r.ensureImage(ctx); err != nil {
		return err
	}
	var mu sync.Mutex
	err = r.forEachPlain(ctx, items, func(ctx context.Context, file string) error {
		c := byFile[file]
		var ins []*bench.Instance
		for _, l := range r.rc.Levels {
			if l == 2 && c.mask.TestPatchL2 == "" {
				continue
			}
			ins = append(ins, r.instance(c, l))
		}
		d := digest("verify", recipe, r.env.Image, ins, r.rc.F2PPassRateMax, lim)
		var out verifyOut
		ok, err := r.cached(d, &out, file)
		if err != nil {
			return err
		}
		if !ok {
			for _, in := range ins {
				chk, err := r.verifyLevel(ctx, in, lim)
				if err != nil {
					return err
				}
				if in.Level == 1 {
					out.L1 = chk
				} else {
					out.L2 = chk
				}
			}
			if err := r.store(d, out, file); err != nil {
				return err
			}
		}
		mu.Lock()
		defer mu.Unlock()
		c.verify = out
		r.res.report.Masked += len(ins)
		if r.wantLevel(2) && c.mask.TestPatchL2 == "" {
			reason := "no level 2 test patch: the test file imports no tested object from the package"
			if c.mask.Level2Problem != "" {
				reason = "level 2 cannot be made: " + c.mask.Level2Problem
			}
			r.drop(c, StageMask, 2, reason)
		}
		for lvl, chk := range []*levelCheck{1: out.L1, 2: out.L2} {
			if chk != nil && chk.Reason != "" {
				r.drop(c, StageVerify, lvl, chk.Reason)
			} else if chk != nil {
				r.res.report.Verified++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.logf("verified: %d instances passed", r.res.report.Verified)
	return nil
}

// verifyLevel runs one instance's checks.
func (r *repoRun) verifyLevel(ctx context.Context, in *bench.Instance, lim evaluate.Limits) (*levelCheck, error) {
	h := harness{exec: r.o.lease, image: r.env.Image, repo: r.rc.Repository, lim: lim, ceiling: r.rc.F2PPassRateMax,
		logDir: r.w.file("verify", fileKey(in.InstanceID))}
	return h.check(ctx, in)
}

// harness is what checking an instance with cmd/eval's harness takes:
// where its containers run, its environment image, where the runs' logs
// go, the evaluation limits and the ceiling of fail-to-pass tests that
// may pass without a solution.
type harness struct {
	exec    executor.Starter // the run's lease: every container under it
	image   string
	repo    string
	logDir  string
	lim     evaluate.Limits
	ceiling float64
}

// check runs an instance with no solution and with its gold patch,
// verifyRuns times, in fresh containers, as cmd/eval grades it.
func (h harness) check(ctx context.Context, in *bench.Instance) (*levelCheck, error) {
	chk := &levelCheck{}
	logDir, lim := h.logDir, h.lim
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("verify logs: %w", err)
	}
	var files map[string][]byte // the last run's test outputs
	run := func(name string, pred evaluate.Prediction, gold bool, derive bool) (*evaluate.Report, error) {
		var log bytes.Buffer
		rep, out, err := evaluate.Evaluate(ctx, h.exec, evaluate.Task{
			Dataset: verifyDataset, Instance: in, Attempt: 1, Prediction: pred, Gold: gold, Image: h.image,
			Labels:         map[string]string{labelProject: "1", labelKind: "collect", labelRepo: h.repo},
			DeriveCanaries: derive,
		}, lim, &log)
		files = out
		if werr := os.WriteFile(filepath.Join(logDir, name+".log"), log.Bytes(), 0o644); werr != nil && err == nil {
			err = werr
		}
		if rep != nil {
			chk.Seconds += rep.Seconds
		}
		return rep, err
	}
	empty := evaluate.Prediction{Model: "empty"}
	if in.Level == 2 {
		empty.Patch = []byte(agentCodePackage(nil))
	}
	rep, err := run("empty", empty, false, false)
	if err != nil {
		return nil, fmt.Errorf("%s: the empty run: %w", in.InstanceID, err)
	}
	chk.EmptyRate = rep.PassedRate
	chk.P2PKept = rep.RT || in.Level == 2
	switch {
	case in.Level == 2 && (rep.InstallOK == nil || !*rep.InstallOK):
		chk.Reason = "an empty agent_code package does not install"
		return chk, nil
	case rep.Resolved:
		chk.Reason = "the empty patch resolves the instance"
		return chk, nil
	case chk.EmptyRate > h.ceiling:
		chk.Reason = fmt.Sprintf("without the feature %.0f%% of the fail-to-pass tests still pass (ceiling %.0f%%)", 100*chk.EmptyRate, 100*h.ceiling)
		return chk, nil
	case !chk.P2PKept:
		chk.Reason = "the masked codebase fails pass-to-pass tests: " + failureText(rep)
		return chk, nil
	}
	gold := evaluate.Prediction{Model: "gold", Patch: []byte(in.Patch)}
	// Canaries: a run with every place of every fail-to-pass test tried
	// says which places the gold patch fails every canary of; the gold
	// runs below then grade with those, drawn as grading draws them.
	rep, err = run("gold-canaries", gold, true, true)
	if err != nil {
		return nil, fmt.Errorf("%s: the gold run that derives canaries: %w", in.InstanceID, err)
	}
	chk.GoldAudit = auditKinds(nil, rep)
	if rep.Resolved {
		if chk.Canaries, err = evaluate.DerivedCanaries(in, rep, files); err != nil {
			return nil, fmt.Errorf("%s: %w", in.InstanceID, err)
		}
	}
	canaried := *in
	canaried.Canaries = chk.Canaries
	in = &canaried
	var failed *evaluate.Report
	for i := 1; i <= verifyRuns; i++ {
		rep, err := run(fmt.Sprintf("gold-%d", i), gold, true, false)
		if err != nil {
			return nil, fmt.Errorf("%s: gold run %d: %w", in.InstanceID, i, err)
		}
		chk.GoldRuns++
		chk.GoldAudit = auditKinds(chk.GoldAudit, rep)
		if rep.Resolved {
			chk.GoldResolved++
		} else {
			failed = rep
		}
	}
	switch {
	case chk.GoldResolved == 0:
		chk.Reason = "the gold patch does not make every test pass: " + failureText(failed)
	case chk.GoldResolved < chk.GoldRuns:
		chk.Reason = fmt.Sprintf("flaky: the gold patch made every test pass in %d of %d runs", chk.GoldResolved, chk.GoldRuns)
	}
	return chk, nil
}

// forEachPlain runs fn on each item with the configured number of workers.
func (r *repoRun) forEachPlain(ctx context.Context, items []string, fn func(ctx context.Context, item string) error) error {
	return r.forEach(ctx, items, "", func(ctx context.Context, _ func() (*box, error), item string) error {
		return fn(ctx, item)
	})
}

// ensureImage checks that the environment image is there (a stage run
// alone found only its reference).
func (r *repoRun) ensureImage(ctx context.Context) error {
	ok, err := r.o.Engine.ImageExists(ctx, r.env.Image)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("the environment image %s is not in the engine: run the %s stage", r.env.Image, StageEnv)
	}
	return nil
}

// auditKinds adds the kinds of rep's audit records to kinds, sorted.
func auditKinds(kinds []string, rep *evaluate.Report) []string {
	for _, a := range rep.Audit {
		if !slices.Contains(kinds, a.Kind) {
			kinds = append(kinds, a.Kind)
		}
	}
	slices.Sort(kinds)
	return kinds
}

// failureText is why a run did not resolve, for a drop reason: its failure
// modes, and what the harness saw tampered with (GraderTampering alone
// does not say).
func failureText(rep *evaluate.Report) string {
	s := strings.Join(rep.FailureModes, ", ")
	if s == "" {
		s = "no failure mode given"
	}
	if len(rep.Tampering) > 0 {
		s += " (" + rep.Tampering[0] + ")"
	}
	return s
}
