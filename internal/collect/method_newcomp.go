package collect

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/components"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/history"
	"github.com/featbench/featbench/internal/newcomp"
	"github.com/featbench/featbench/internal/tokens"
)

// newComponentsMethod is FEA-Bench's method (paper 004, section 3.3 and
// appendix A): pull requests with test changes whose new functions,
// classes and methods (found by diffing syntax trees, internal/components)
// are more than a quarter of the code patch's edited lines, whose gold
// patch is under 8K tokens, and whose intent is a new feature; their tests
// must fail or error before the patch (an ImportError counts) and all pass
// after; the statement is the pull request's request plus the definitions
// of the new components (internal/newcomp).
type newComponentsMethod struct {
	hint string
}

func newNewComponentsMethod(rc config.Repo) historyMethod {
	h := rc.Hint
	if h == "" {
		h = newcomp.DefaultHint
	}
	return &newComponentsMethod{hint: h}
}

func (m *newComponentsMethod) Name() string { return bench.MethodNewComponents }

// Key is what of the method its stored outputs depend on besides the
// shared pipeline's inputs: the differ's script and the hint.
func (m *newComponentsMethod) Key() string {
	return digest("new-components", newComponentsRecipe, string(components.Script()), m.hint, newcomp.MinShare, maxGoldTokens)
}

// newComponentsRecipe is the version of the method's filters and
// statement (3: no index lines in the non-Python changes; 2: the leak check reads what the statement quotes of the
// pull request, not the code's own docstrings).
const newComponentsRecipe = 3

// maxGoldTokens is FEA-Bench's bound on a gold patch (appendix A.2: 8K
// tokens), estimated.
const maxGoldTokens = 8192

// Funnel steps of the new-components method.
const (
	stepNCPulls  = "pull requests"
	stepNew      = "adding new components"
	stepShare    = "new components over 25% of the edited lines"
	stepGoldSize = "a gold patch under 8K tokens"
	stepIntent   = "a new feature by intent"
)

// Select takes every pull request merged in the window; the release each
// came with is kept for the instance.
func (m *newComponentsMethod) Select(ctx context.Context, r *historyRun) ([]*prCandidate, error) {
	release := map[int]string{}
	for _, rel := range r.hist.Releases {
		for _, n := range rel.Pulls {
			if _, ok := release[n]; !ok {
				release[n] = rel.Tag
			}
		}
	}
	var cands []*prCandidate
	for _, ch := range r.hist.Pulls {
		cands = append(cands, &prCandidate{Change: ch, Release: release[ch.Number]})
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].Number < cands[j].Number })
	r.step(stepNCPulls, len(cands))
	return cands, nil
}

// Filters: new components, their share of the edited lines, the gold
// patch's size, and the intent.
func (m *newComponentsMethod) Filters() []prFilter {
	return []prFilter{
		{Step: stepNew, Prepare: m.findComponents, Drop: hasNewComponents},
		{Step: stepShare, Drop: componentShare},
		{Step: stepGoldSize, Drop: goldSize},
		{Step: stepIntent, Prepare: m.classify, Drop: featureIntent},
	}
}

// findComponents runs the differ on the candidates' Python files, before
// and after, in one container of the repository's base image (its Python
// is the one the code is written for).
func (m *newComponentsMethod) findComponents(ctx context.Context, r *historyRun, pcs []*prCandidate) error {
	var req components.Request
	for _, pc := range pcs {
		ch := components.Change{ID: prItem(pc)}
		for _, f := range history.PythonFiles(pc.Patches.CodeFiles) {
			fc := components.FileChange{Path: f}
			for _, side := range []struct {
				commit string
				dst    *[]byte
			}{{pc.Base, &fc.Before}, {pc.Merge, &fc.After}} {
				data, ok, err := r.git.ReadFile(ctx, side.commit, f)
				if err != nil {
					return err
				}
				if ok {
					if data == nil {
						data = []byte{}
					}
					*side.dst = data
				}
			}
			if fc.Before == nil && fc.After == nil {
				continue
			}
			ch.Files = append(ch.Files, fc)
		}
		req.Changes = append(req.Changes, ch)
	}
	if err := req.Validate(); err != nil {
		return fmt.Errorf("the components request: %w", err)
	}
	res, err := runComponents(ctx, r, req)
	if err != nil {
		return err
	}
	for i, pc := range pcs {
		c := res.Changes[i]
		pc.Components = &c
	}
	return nil
}

// runComponents runs the differ in a container of the base image, with no
// network, as the definitions script runs.
func runComponents(ctx context.Context, r *historyRun, req components.Request) (*components.Result, error) {
	b, err := openBox(ctx, r.o.lease, r.base, r.rc.Repository, r.lim, r.w.file("filter.log"))
	if err != nil {
		return nil, err
	}
	defer b.close()
	raw, err := encodeJSON(req)
	if err != nil {
		return nil, err
	}
	if err := b.c.CopyIn(ctx, fbDir, []container.File{
		{Path: components.ScriptName, Mode: 0o644, Data: components.Script()},
		{Path: "components-request.json", Mode: 0o644, Data: raw},
		{Path: "out/.keep", Mode: 0o644},
	}); err != nil {
		return nil, fmt.Errorf("copying the components script in: %w", err)
	}
	argv := components.Command(fbDir+"/"+components.ScriptName, fbDir+"/components-request.json")
	if _, err := b.must(ctx, "finding the new components", "/", 10*time.Minute, "sh", "-c",
		strings.Join(argv, " ")+" > "+outDir+"/components.json"); err != nil {
		return nil, err
	}
	files, err := b.c.CopyOut(ctx, outDir+"/components.json", 256<<20)
	if err != nil || len(files) != 1 {
		return nil, fmt.Errorf("reading the components: %v", err)
	}
	res, err := components.ParseResult(files[0].Data)
	if err != nil {
		return nil, err
	}
	if len(res.Changes) != len(req.Changes) {
		return nil, fmt.Errorf("the components script answered %d changes for %d", len(res.Changes), len(req.Changes))
	}
	return res, nil
}

// hasNewComponents drops a candidate whose code patch adds no function,
// class or method (moved or renamed ones do not count), or one of whose
// Python files cannot be read: its new components cannot be known.
func hasNewComponents(pc *prCandidate) string {
	c := pc.Components
	if c == nil {
		return "its new components were not found"
	}
	if errs := c.Errors(); len(errs) > 0 {
		return errs[0]
	}
	n := 0
	for _, comp := range c.Components() {
		if comp.SameAs == "" {
			n++
		}
	}
	if n == 0 {
		if len(c.Components()) > 0 {
			return "the code patch adds no new function, class or method: what it adds is moved or renamed (" + c.Components()[0].Name + " was " + c.Components()[0].SameAs + ")"
		}
		return "the code patch adds no function, class or method"
	}
	for _, bc := range c.Bench() {
		if why := bc.Problem(); why != "" {
			return fmt.Sprintf("the new component %s cannot be published: %s", bc.Name, why)
		}
	}
	return ""
}

// componentShare drops a candidate whose new components are not more than
// newcomp.MinShare of the code patch's edited lines (added and removed;
// the other files' lines counted from the patch).
func componentShare(pc *prCandidate) string {
	share, comp, edited := pc.Components.Share(otherEdited(pc.Patches.Code))
	if share > newcomp.MinShare {
		return ""
	}
	return fmt.Sprintf("new components are %d of the %d edited lines (%.0f%%), not more than %.0f%%", comp, edited, 100*share, 100*newcomp.MinShare)
}

// otherEdited counts the lines a patch adds and removes in files that are
// not Python.
func otherEdited(p string) int {
	n, file := 0, ""
	for _, l := range strings.Split(p, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			file = ""
			if i := strings.LastIndex(l, " b/"); i >= 0 {
				file = l[i+3:]
			}
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		case (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && path.Ext(file) != ".py":
			n++
		}
	}
	return n
}

// goldSize drops a gold patch of more than maxGoldTokens (FEA-Bench leaves
// out the long tail).
func goldSize(pc *prCandidate) string {
	if n := tokens.Estimate(pc.Patches.Code); n > maxGoldTokens {
		return fmt.Sprintf("the gold patch is about %d tokens, over %d", n, maxGoldTokens)
	}
	return ""
}

// classify asks for each candidate's intent: the LLM when one is
// configured (a failure falls back to the rules, and the stage's output
// is not stored, so that the next run asks again), else the rules.
func (m *newComponentsMethod) classify(ctx context.Context, r *historyRun, pcs []*prCandidate) error {
	for _, pc := range pcs {
		var names []string
		for _, c := range pc.Components.Components() {
			if c.SameAs == "" {
				names = append(names, c.Name)
			}
		}
		var chat newcomp.Chatter
		if r.o.LLM != nil {
			chat = r.o.LLM
		}
		it, err := newcomp.ClassifyIntent(ctx, chat, r.rc.Repository, pc.Title, pc.Body, names)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.logf("pull request #%d: the LLM could not classify its intent, the rules do: %v", pc.Number, err)
			r.unstored = true
			it = newcomp.RulesIntent(pc.Title, pc.Body)
		}
		pc.Intent = &it
	}
	return nil
}

func featureIntent(pc *prCandidate) string {
	it := pc.Intent
	if it == nil {
		return "its intent was not classified"
	}
	if it.Feature {
		return ""
	}
	return fmt.Sprintf("not a new feature (%s, by the %s: %s)", it.Label, it.By, it.Reason)
}

// Accept wants a test of the test patch that fails or errors before the
// patch (a file that does not import counts each of its tests) and passes
// after it, and every test of the test patch's files passing after it
// (FEA-Bench: no FAILED status after the gold patch).
func (m *newComponentsMethod) Accept(pc *prCandidate) string {
	touched := map[string]bool{}
	for _, f := range pc.Patches.TestFiles {
		touched[f] = true
	}
	var failing []string
	ran := false
	for _, f := range pc.verify.Files {
		if !touched[f] {
			continue
		}
		after, ok := pc.verify.After[f]
		ran = ran || ok
		for _, o := range after.Failing {
			failing = append(failing, o.ID)
		}
	}
	sort.Strings(failing)
	switch {
	case !ran:
		return "pytest collects no test of the test patch's files after the patch (see the verify log)"
	case len(failing) > 0:
		return fmt.Sprintf("%d tests of the test patch's files do not pass after the patch (%s)", len(failing), failing[0])
	case len(pc.verify.FailToPass) == 0:
		return "no test of the test patch fails or errors before the patch"
	}
	return ""
}

// Statement is the feature request with the new components' definitions,
// checked for leaks of the solution's or the tests' lines.
func (m *newComponentsMethod) Statement(ctx context.Context, r *historyRun, pc *prCandidate) (string, string, error) {
	comps := pc.Components.Bench()
	project := r.rc.ImportName
	if project == "" {
		project = r.rc.Repository
	}
	in := newcomp.Input{Project: project, Title: pc.Title, Body: pc.Body, Components: comps,
		CodePatch: pc.Patches.Code, TestPatch: pc.Patches.Test, Hint: m.hint}
	text, err := newcomp.Statement(in)
	if err != nil {
		return "", "", err
	}
	if l := newcomp.Leaks(in); len(l) > 0 {
		return "", "the statement leaks: it holds " + l[0], nil
	}
	return text, "", nil
}

// Extras: the new components, as the statement defines them.
func (m *newComponentsMethod) Extras(pc *prCandidate, in *bench.Instance) {
	if pc.Components != nil {
		in.Components = pc.Components.Bench()
	}
}
