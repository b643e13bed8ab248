package collect

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/featbench/featbench/internal/objid"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/featbench/featbench/internal/llm"
	"github.com/featbench/featbench/internal/trace"
)

// classifyRecipe is the version of the classifiers.
const classifyRecipe = 1

// stageClassify finds each candidate's tested top-level objects.
func (r *repoRun) stageClassify(ctx context.Context) error {
	n := 0
	for _, c := range r.cands {
		if !c.alive() {
			continue
		}
		g := r.graphs[c.File].Graph
		d := digest("classify", recipe, classifyRecipe, r.graphDigest(c.File), r.llmKey())
		ok, err := r.cached(d, &c.classify, c.File)
		if err != nil {
			return err
		}
		if !ok {
			out := classifyRules(c.File, g.Imports[c.File], g)
			store := true
			if r.o.LLM != nil {
				lo, err := r.classifyLLM(ctx, c.File, g, out)
				if err != nil {
					// Kept as the rules decided, not stored: the next run
					// asks again.
					out.Note = "the LLM failed, the rules decided: " + err.Error()
					store = false
				} else {
					out = lo
				}
			}
			c.classify = out
			if store {
				if err := r.store(d, out, c.File); err != nil {
					return err
				}
			}
		}
		if len(c.classify.Tops) == 0 {
			r.drop(c, StageClassify, 0, "no tested top-level object found among the test file's imports")
			continue
		}
		n++
	}
	r.res.report.Classified = n
	r.logf("classified: %d candidates with tested top-level objects", n)
	return nil
}

// graphDigest identifies a stored trace, for the stages that read it.
func (r *repoRun) graphDigest(file string) string {
	raw, _ := json.Marshal(r.graphs[file])
	return digest(string(raw))
}

// llmKey is what of the LLM's configuration changes its answers.
func (r *repoRun) llmKey() string {
	if r.o.LLM == nil {
		return ""
	}
	l := r.o.Config.LLM
	return digest(l.Endpoint, l.Model, l.Temperature, l.MaxTokens, l.Seed)
}

// classifyLLM asks the LLM which of the imported objects are tested, as
// the paper's classifier does (000, appendix A.1 step 2). The candidates
// are the same ones the rules judge; the rules' decisions are kept for the
// record, with Top set from the LLM's answer.
func (r *repoRun) classifyLLM(ctx context.Context, testFile string, g *trace.Graph, rules classifyOut) (classifyOut, error) {
	src, err := r.readSources(ctx, append([]string{testFile}, fileOfIDs(rules.Decisions)...))
	if err != nil {
		return rules, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Decide which of the candidate objects below are the objects under test in the test file %s: the functions, classes or methods whose behaviour the tests check. Helpers that only build inputs or check outputs, test utilities and general-purpose tools are not under test.\n\n", testFile)
	fmt.Fprintf(&b, "## Test file %s\n\n```python\n%s\n```\n\n## Candidates\n\n", testFile, src[testFile])
	for i, d := range rules.Decisions {
		if !d.Called {
			continue
		}
		p, _, line, _ := objid.Parse(d.ID)
		fmt.Fprintf(&b, "### Candidate %d\n- id: %s\n- imported as: %s\n", i+1, d.ID, d.Name)
		if n := g.Node(d.ID); n != nil {
			fmt.Fprintf(&b, "- source:\n```python\n%s\n```\n", span(src[p], n.Start, n.End))
		} else {
			fmt.Fprintf(&b, "- defined at %s line %d\n", p, line)
		}
	}
	b.WriteString("\nAnswer with a JSON block: ```json\n{\"tested_object_ids\": [\"<id>\", ...], \"reasoning\": \"<one or two sentences>\"}\n```\nUse the ids exactly as given. When unsure whether a candidate is a general-purpose tool, count it as under test.\n")
	reply, err := r.o.LLM.Chat(ctx, []llm.Message{
		{Role: "system", Content: "You analyse Python test files and say which objects they test."},
		{Role: "user", Content: b.String()},
	})
	if err != nil {
		return rules, err
	}
	raw, err := llm.ExtractJSONBlock(reply.Content)
	if err != nil {
		return rules, fmt.Errorf("reading the answer: %w", err)
	}
	var ans struct {
		IDs []string `json:"tested_object_ids"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return rules, fmt.Errorf("reading the answer: %w", err)
	}
	known := map[string]int{}
	for i, d := range rules.Decisions {
		if d.Called {
			known[d.ID] = i
		}
	}
	out := classifyOut{Method: "llm", Decisions: append([]decision(nil), rules.Decisions...)}
	for i := range out.Decisions {
		out.Decisions[i].Top = false
	}
	tops := map[string]bool{}
	for _, id := range ans.IDs {
		i, ok := known[id]
		if !ok {
			return rules, fmt.Errorf("the answer names %q, which is not a candidate", id)
		}
		out.Decisions[i].Top = true
		tops[id] = true
	}
	for id := range tops {
		for _, m := range testedMethods(id, testFile, g) {
			tops[m] = true
		}
	}
	out.Tops = slices.Sorted(maps.Keys(tops))
	return out, nil
}

func fileOfIDs(ds []decision) []string {
	seen := map[string]bool{}
	for _, d := range ds {
		if p, _, _, err := objid.Parse(d.ID); err == nil {
			seen[p] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// span is lines start..end (1-based, inclusive) of a source text.
func span(src string, start, end int) string {
	lines := strings.Split(src, "\n")
	if start < 1 || start > len(lines) {
		return ""
	}
	if end > len(lines) {
		end = len(lines)
	}
	return strings.Join(lines[start-1:end], "\n")
}

// p2pOut is a candidate's pass-to-pass files.
type p2pOut struct {
	Files  []string `json:"files"`
	Tops   []string `json:"tops"`   // the top-level objects left after pruning
	Pruned []string `json:"pruned"` // tops given up, most used first
}

// chooseP2P picks pass-to-pass files that share no top-level object with
// the fail-to-pass file: a file shares one when its traced run entered it.
// When fewer than least files qualify, the top used by the most pool files
// is given up and the files counted again (the paper's frequency rule,
// 000 A.1). Of the qualifying files, most are drawn at random.
func chooseP2P(tops []string, pool map[string]map[string]bool, least, most int, rng *rand.Rand) (p2pOut, bool) {
	working := map[string]bool{}
	for _, t := range tops {
		working[t] = true
	}
	var out p2pOut
	files := slices.Sorted(maps.Keys(pool))
	for len(working) > 0 {
		var ok []string
		for _, f := range files {
			shares := false
			for t := range working {
				if pool[f][t] {
					shares = true
					break
				}
			}
			if !shares {
				ok = append(ok, f)
			}
		}
		if len(ok) >= least {
			rng.Shuffle(len(ok), func(i, j int) { ok[i], ok[j] = ok[j], ok[i] })
			if len(ok) > most {
				ok = ok[:most]
			}
			sort.Strings(ok)
			out.Files = ok
			out.Tops = slices.Sorted(maps.Keys(working))
			return out, true
		}
		// Give up the most used top (ties: the first id).
		best, bestN := "", -1
		for _, t := range slices.Sorted(maps.Keys(working)) {
			n := 0
			for _, f := range files {
				if pool[f][t] {
					n++
				}
			}
			if n > bestN {
				best, bestN = t, n
			}
		}
		delete(working, best)
		out.Pruned = append(out.Pruned, best)
	}
	return out, false
}

// stageP2P chooses each candidate's pass-to-pass files.
func (r *repoRun) stageP2P(ctx context.Context) error {
	pool := map[string]map[string]bool{}
	for f, g := range r.graphs {
		if g.OK {
			pool[f] = g.Graph.Reached()
		}
	}
	n := 0
	for _, c := range r.cands {
		if !c.alive() {
			continue
		}
		d := digest("p2p", recipe, r.o.Seed, c.classify.Tops, r.rc.P2PFiles, poolDigest(r, c.File))
		ok, err := r.cached(d, &c.p2p, c.File)
		if err != nil {
			return err
		}
		if !ok {
			others := map[string]map[string]bool{}
			for f, ids := range pool {
				if f != c.File {
					others[f] = ids
				}
			}
			out, found := chooseP2P(c.classify.Tops, others, r.rc.P2PFiles[0], r.rc.P2PFiles[1], itemRand(r.o.Seed, "p2p", r.rc.Repository, c.File))
			if !found {
				out.Files = nil
			}
			c.p2p = out
			if err := r.store(d, out, c.File); err != nil {
				return err
			}
		}
		if len(c.p2p.Files) == 0 {
			r.drop(c, StageP2P, 0, fmt.Sprintf("no pass-to-pass file shares no tested object with it (%d files in the pool)", len(pool)-1))
			continue
		}
		n++
	}
	r.res.report.WithP2P = n
	r.logf("pass-to-pass files chosen for %d candidates", n)
	return nil
}

// poolDigest identifies the traces the pass-to-pass choice reads.
func poolDigest(r *repoRun, except string) string {
	var parts []string
	for _, f := range slices.Sorted(maps.Keys(r.graphs)) {
		if f != except && r.graphs[f].OK {
			parts = append(parts, f, r.graphDigest(f))
		}
	}
	return digest(parts)
}

// walkOut is what a candidate's task removes.
type walkOut struct {
	Budget int              `json:"budget"`
	Result trace.WalkResult `json:"result"`
}

// stageWalk walks each candidate's graph from its tops.
func (r *repoRun) stageWalk(ctx context.Context) error {
	for _, c := range r.cands {
		if !c.alive() {
			continue
		}
		d := digest("walk", recipe, r.o.Seed, r.rc.LineBudget, c.p2p, r.graphDigest(c.File), p2pDigest(r, c.p2p.Files))
		ok, err := r.cached(d, &c.walk, c.File)
		if err != nil {
			return err
		}
		if !ok {
			kept := map[string]bool{}
			for _, f := range c.p2p.Files {
				for id := range r.graphs[f].Graph.Reached() {
					kept[id] = true
				}
			}
			rng := itemRand(r.o.Seed, "budget", r.rc.Repository, c.File)
			lo, hi := r.rc.LineBudget[0], r.rc.LineBudget[1]
			budget := lo + rng.IntN(hi-lo+1)
			res := trace.Walk(trace.WalkInput{
				Graph: r.graphs[c.File].Graph, Tops: c.p2p.Tops, Budget: budget,
				Kept:     func(id string) bool { return kept[id] },
				Eligible: func(n *trace.Node) bool { return n.Kind != trace.KindModule && !isTestPath(n.File) },
				Through:  func(n *trace.Node) bool { return n.Local },
			})
			c.walk = walkOut{Budget: budget, Result: res}
			if err := r.store(d, c.walk, c.File); err != nil {
				return err
			}
		}
		if len(c.walk.Result.Tops) == 0 {
			r.drop(c, StageWalk, 0, "every tested object is also used by the pass-to-pass files, or is test code")
		}
	}
	return nil
}

func p2pDigest(r *repoRun, files []string) string {
	var parts []string
	for _, f := range files {
		parts = append(parts, f, r.graphDigest(f))
	}
	return digest(parts)
}
