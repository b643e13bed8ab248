package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/infer"
	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/testenv"
	"github.com/featbench/featbench/internal/tokens"
)

// filesAnswer is an answer in the whole-files format.
func filesAnswer(files map[string]string) string {
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString("Here are the files.\n\n")
	for _, p := range paths {
		fmt.Fprintf(&b, "File: %s\n```python\n%s```\n\n", p, files[p])
	}
	return b.String()
}

var contextFile = regexp.MustCompile(`(?m)^----- (\S+) -----$`)

// TestInferPromptWithLLMTestDouble: prompt mode (FEA-Bench's single
// request) on the lite split of example/v3, levels 1 and 2, in real
// containers against the LLM test double. The double answers one instance
// with its gold patch as a diff, two with whole files, and the others with
// no change; eval run grades the predictions on the real engine (the three
// resolve). The tokens are what the double served; the BM25 prompts stay
// within the budget and show no test file; the oracle prompt shows exactly
// the files the gold patch changes.
func TestInferPromptWithLLMTestDouble(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	t.Setenv("DOCKER_HOST", host)
	root := inferProject(t)
	const (
		stats  = "featbench__textkit.test_stats.bdae62d6.lv1"
		budget = 6000
	)
	ds := exampleV3(t, root)
	type job struct {
		marker marker
		answer string
	}
	jobs := []job{
		{markerOf(t, root, inferL1), "The change:\n\n```diff\n" + ds.Instance(inferL1).Patch + "```\n"},
		{markerOf(t, root, stats), filesAnswer(solution(t, root, stats))},
		{markerOf(t, root, inferL2), filesAnswer(solution(t, root, inferL2))},
	}
	var mu sync.Mutex
	prompts := map[string]string{} // by the answer's first 40 bytes, or "none"
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		mu.Lock()
		defer mu.Unlock()
		for _, j := range jobs {
			if j.marker.in(r.Text) {
				prompts[j.answer[:40]] = r.Text
				return llmdouble.Reply{Text: j.answer}
			}
		}
		prompts["none"] = r.Text
		return llmdouble.Reply{Text: "I would need to run the tests first."}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	out, errOut, code := runEval(t, "infer", "--root", root, "--mode", "prompt", "--context", "bm25", "--budget", fmt.Sprint(budget),
		"--dataset", "example/v3", "--split", "lite", "--model", doubleModel, "--upstream", dbl.URL, "--run-id", "prompt-bm25", "--workers", "2")
	if code != 0 {
		t.Fatalf("eval infer --mode prompt: exit %d\n%s\n%s", code, out, errOut)
	}
	preds := readPreds(t, filepath.Join(root, "runs", "prompt-bm25", "predictions.jsonl"))
	if len(preds) != 6 {
		t.Fatalf("%d predictions; want 6:\n%s", len(preds), errOut)
	}
	for id, p := range preds {
		solved := id == inferL1 || id == inferL2 || id == stats
		switch {
		case solved && (p.Patch == "" || p.FailureMode != "" || strings.Contains(p.Patch, "tests/")):
			t.Errorf("%s: failure %q, patch:\n%.2000s", id, p.FailureMode, p.Patch)
		case !solved && (p.Patch != "" || p.FailureMode != infer.AnswerError):
			t.Errorf("%s: an answer with no change gave failure %q and patch %q", id, p.FailureMode, p.Patch)
		case p.Turns != 1:
			t.Errorf("%s: %d requests, want one", id, p.Turns)
		}
	}
	checkServed(t, preds, dbl.Served())
	for key, text := range prompts {
		if n := tokens.Estimate(text); n > budget {
			t.Errorf("a prompt (%s) takes about %d tokens, over the budget of %d", key, n, budget)
		}
		files := contextFile.FindAllStringSubmatch(text, -1)
		if len(files) == 0 && !strings.Contains(text, "Build this from scratch") {
			t.Errorf("a level 1 prompt (%s) shows no file", key)
		}
		for _, f := range files {
			if strings.HasPrefix(f[1], "tests/") || strings.Contains(f[1], "/test_") {
				t.Errorf("a prompt (%s) shows the test file %s", key, f[1])
			}
		}
	}

	// Graded on the real engine: the three answered instances resolve.
	out, errOut, code = runEval(t, "run", "--root", root, "--dataset", "example/v3", "--split", "lite",
		"--predictions", filepath.Join(root, "runs", "prompt-bm25", "predictions.jsonl"), "--run-id", "prompt-bm25", "--workers", "2")
	if code != 0 || !strings.Contains(out, "3 of 6 instances resolved") {
		t.Fatalf("eval run: exit %d\n%s\n%s", code, out, errOut)
	}

	// Oracle: the prompt shows the files the gold patch changes, and only
	// those.
	mu.Lock()
	clear(prompts)
	mu.Unlock()
	out, errOut, code = runEval(t, "infer", "--root", root, "--mode", "prompt", "--context", "oracle", "--dataset", "example/v3", "--split", "lite",
		"--instance", inferL1, "--model", doubleModel, "--upstream", dbl.URL, "--run-id", "prompt-oracle")
	if code != 0 {
		t.Fatalf("eval infer --context oracle: exit %d\n%s\n%s", code, out, errOut)
	}
	var shown []string
	for _, f := range contextFile.FindAllStringSubmatch(prompts[jobs[0].answer[:40]], -1) {
		shown = append(shown, f[1])
	}
	var gold []string
	for _, l := range strings.Split(ds.Instance(inferL1).Patch, "\n") {
		if p, ok := strings.CutPrefix(l, "--- a/"); ok {
			gold = append(gold, p)
		}
	}
	if strings.Join(shown, " ") != strings.Join(gold, " ") || len(gold) == 0 {
		t.Errorf("the oracle prompt shows %q; the gold patch changes %q", shown, gold)
	}
}
