package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/testenv"
)

// TestInferPromptRealLibrariesWithLLMTestDouble is a manual run, skipped
// unless FEATBENCH_PROMPT_ROOT names a project folder (featbench.toml and
// data/) and FEATBENCH_PROMPT_DATASET a dataset of it, such as the
// new-components collection of real libraries docs/collection.md reports:
// eval infer's prompt mode (BM25 context, the paper's 27K budget) asks the
// LLM test double about every instance, the double answers each with its
// gold patch, and eval run grades the answers on the real engine. Every
// instance must resolve: the prompt names the instance, the answer goes
// through the proxy, the diff is applied and graded as an agent's.
func TestInferPromptRealLibrariesWithLLMTestDouble(t *testing.T) {
	root, dataset := os.Getenv("FEATBENCH_PROMPT_ROOT"), os.Getenv("FEATBENCH_PROMPT_DATASET")
	if root == "" || dataset == "" {
		t.Skip("a manual run: set FEATBENCH_PROMPT_ROOT and FEATBENCH_PROMPT_DATASET")
	}
	host := testenv.DockerHost(t)
	t.Setenv("DOCKER_HOST", host)
	data, err := bench.LoadDatasets(t.Context(), filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Dataset(dataset)
	if ds == nil {
		t.Fatalf("no dataset %s in %s", dataset, root)
	}
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		for _, in := range ds.Instances {
			if strings.Contains(r.Text, strings.TrimSpace(in.ProblemStatement)) {
				return llmdouble.Reply{Text: "```diff\n" + in.Patch + "```\n"}
			}
		}
		return llmdouble.Reply{Text: "Unknown instance."}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	id := "prompt-bm25-double"
	out, errOut, code := runEval(t, "infer", "--root", root, "--mode", "prompt", "--context", "bm25", "--dataset", dataset,
		"--model", "double", "--upstream", dbl.URL, "--run-id", id, "--workers", "2")
	if code != 0 {
		t.Fatalf("eval infer: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("infer:\n%s", out)
	out, errOut, code = runEval(t, "run", "--root", root, "--dataset", dataset,
		"--predictions", filepath.Join(root, "runs", id, "predictions.jsonl"), "--run-id", id, "--workers", "2")
	t.Logf("run:\n%s", out)
	want := fmt.Sprintf("%d of %d instances resolved", len(ds.Instances), len(ds.Instances))
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("eval run: exit %d, want %q\n%s\n%s", code, want, out, errOut)
	}
}
