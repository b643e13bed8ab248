package site_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/meter"
	"github.com/featbench/featbench/site"
)

// Where the fixture's trajectory lands: Agent A on demo__pkg-1.
const (
	trajSub      = "data/submissions/demo/v1/full/20260301_agent-a/"
	trajPage     = "datasets/demo/v1/systems/agent-a/full/trajectories/demo__pkg-1/attempt-1/"
	trajInstance = "datasets/demo/v1/instances/demo__pkg-1/"
	trajOther    = "datasets/demo/v1/instances/demo__pkg-2/"
	trajScript   = `<script>alert("traj")</script>`
)

// trajectoryLines is a trajectory as eval infer's proxy records it: a
// chat completion with a tool call, the next one (repeating the first's
// messages) streamed, and a request that is not a model call. Its texts
// hold markup, which the page must show as text.
func trajectoryLines(t *testing.T, answer string) []byte {
	t.Helper()
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	sys := map[string]any{"role": "system", "content": "You are an agent."}
	user := map[string]any{"role": "user", "content": "Fix it " + trajScript}
	call := map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
		"id": "c1", "type": "function", "function": map[string]any{"name": "run_shell", "arguments": `{"cmd":"ls <b>"}`}}}}
	result := map[string]any{"role": "tool", "tool_call_id": "c1", "content": "pkg/ tests/ " + trajScript}
	exs := []meter.Exchange{
		{Seq: 1, Time: at, Method: "POST", Path: "/v1/chat/completions", Kind: meter.OpenAIChat, Status: 200, Model: "m-1",
			Request:  map[string]any{"model": "m-1", "messages": []any{sys, user}},
			Response: map[string]any{"choices": []any{map[string]any{"index": 0, "message": call}}, "usage": map[string]any{"prompt_tokens": 1200, "completion_tokens": 30}},
			Usage:    &meter.Usage{Input: 1200, Output: 30}, Cost: 0.01, Seconds: 1.5},
		{Seq: 2, Time: at.Add(time.Minute), Method: "POST", Path: "/v1/chat/completions", Kind: meter.OpenAIChat, Stream: true, Status: 200, Model: "m-1",
			Request: map[string]any{"model": "m-1", "stream": true, "messages": []any{sys, user, call, result}},
			Response: `data: {"choices":[{"index":0,"delta":{"content":"` + answer + ` "}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"content":"\u003cscript\u003ealert(\"traj\")\u003c/script\u003e"}}]}` + "\n\n" +
				`data: {"choices":[],"usage":{"prompt_tokens":1500,"completion_tokens":12}}` + "\n\ndata: [DONE]\n\n",
			Usage: &meter.Usage{Input: 1500, Output: 12}, Cost: 0.02, Seconds: 2},
		{Seq: 3, Time: at.Add(2 * time.Minute), Method: "GET", Path: "/v1/models", Status: 200, Response: map[string]any{"data": []any{}}},
	}
	var b bytes.Buffer
	for _, ex := range exs {
		line, err := json.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// packTrajectory packs one trajectory of demo__pkg-1 with the code eval
// submit packs with.
func packTrajectory(t *testing.T, traj []byte) []byte {
	t.Helper()
	run := t.TempDir()
	dir := filepath.Join(run, "demo__pkg-1", "attempt-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rep, _ := json.Marshal(map[string]any{"instance_id": "demo__pkg-1", "trajectory": evaluate.Sum(traj)})
	if err := os.WriteFile(filepath.Join(dir, evaluate.ReportFile), rep, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, evaluate.TrajectoryFile), traj, 0o644); err != nil {
		t.Fatal(err)
	}
	gz, err := evaluate.PackTrajectories(run, []string{"demo__pkg-1", "demo__pkg-2"}, 1)
	if err != nil || gz == nil {
		t.Fatalf("packing: %v (%d bytes)", err, len(gz))
	}
	return gz
}

// tarGz writes an archive of the entries, in order.
func tarGz(t *testing.T, entries ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e[0], Mode: 0o644, Size: int64(len(e[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readPage(t *testing.T, public, page string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(public, filepath.FromSlash(page), "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// A submission's trajectories become pages linked from the instance
// page's row of the system: each exchange's turn, time, endpoint, status,
// tokens, the request's new messages and the answer, all as text; the
// raw JSONL beside it. An instance without a trajectory has no link.
func TestTrajectoryPages(t *testing.T) {
	traj := trajectoryLines(t, "Done")
	root := fixtureRoot(t, map[string]string{trajSub + "trajectories.tar.gz": string(packTrajectory(t, traj))})
	opts := fixtureOptions(t, root)
	rep, err := site.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	public := filepath.Join(root, "public")

	// The instance page's row of Agent A links the trajectory.
	inst := parse(t, readPage(t, public, trajInstance))
	want := "/sub/" + trajPage
	var row *html.Node
	for _, a := range find(inst, func(n *html.Node) bool { return n.Data == "a" }) {
		if href, _ := attr(a, "href"); href == want {
			for row = a; row != nil && row.Data != "tr"; row = row.Parent {
			}
		}
	}
	if row == nil || !strings.Contains(text(row), "Agent A") {
		t.Fatalf("the instance page has no row of Agent A linking %s", want)
	}
	if other := readPage(t, public, trajOther); strings.Contains(other, "/trajectories/") {
		t.Errorf("the page of an instance without a trajectory links one")
	}

	// The trajectory page: every exchange, in order, the markup as text.
	page := readPage(t, public, trajPage)
	doc := parse(t, page)
	for _, s := range find(doc, func(n *html.Node) bool { return n.Data == "script" }) {
		if strings.Contains(text(s), "traj") {
			t.Fatalf("the trajectory's <script> is a script element of the page")
		}
	}
	body := text(doc)
	for _, w := range []string{
		"Turn 1", "Turn 2", "Other request", "2026-03-01 10:00:00Z", "POST /v1/chat/completions", "openai.chat", "GET /v1/models",
		"1200 in, 30 out", "1500 in, 12 out", "2700 in, 42 out", // per exchange, and summed
		"Fix it " + trajScript, "run_shell", `cmd: ls <b>`, "pkg/ tests/ " + trajScript, // request and answer as text
		"Done " + trajScript,     // the stream assembled
		"2 earlier not repeated", // the second request shows what it adds
		"trajectory.jsonl",
	} {
		if !strings.Contains(body, w) {
			t.Errorf("the trajectory page does not show %q", w)
		}
	}
	if strings.Count(body, "You are an agent.") != 1 {
		t.Errorf("the system prompt is shown %d times; want once, in the first request", strings.Count(body, "You are an agent."))
	}
	if !strings.Contains(page, `href="/sub/`+trajPage+`trajectory.jsonl"`) {
		t.Errorf("the trajectory page does not link its raw file")
	}
	raw, err := os.ReadFile(filepath.Join(public, filepath.FromSlash(trajPage), "trajectory.jsonl"))
	if err != nil || !bytes.Equal(raw, traj) {
		t.Errorf("the raw trajectory is not published as recorded (%v)", err)
	}
	if rep.Pages == 0 {
		t.Fatal("no pages")
	}
}

// An archive entry whose name is not <instance>/attempt-<k>/
// trajectory.jsonl with a safe instance id of the split never becomes a
// path: build and build --check refuse it, naming the file and the entry.
func TestTrajectoryHostileEntries(t *testing.T) {
	traj := string(trajectoryLines(t, "Done"))
	for _, name := range []string{
		"../x/attempt-1/trajectory.jsonl",
		"demo__pkg-1/attempt-01/trajectory.jsonl",
		"demo__pkg-1/attempt-2/trajectory.jsonl", // one attempt only
		"demo__pkg-1/attempt-1/../../../../x.jsonl",
		"demo__pkg-404/attempt-1/trajectory.jsonl",
		"/etc/attempt-1/trajectory.jsonl",
	} {
		t.Run(name, func(t *testing.T) {
			root := fixtureRoot(t, map[string]string{trajSub + "trajectories.tar.gz": string(tarGz(t,
				[2]string{"demo__pkg-1/attempt-1/trajectory.jsonl", traj}, [2]string{name, traj}))})
			opts := fixtureOptions(t, root)
			file := filepath.Join(root, filepath.FromSlash(trajSub), "trajectories.tar.gz")
			for what, err := range map[string]error{
				"build":         func() error { _, err := site.Build(context.Background(), opts); return err }(),
				"build --check": func() error { _, err := site.Check(context.Background(), opts); return err }(),
			} {
				if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), `"`+name+`"`) {
					t.Errorf("%s: %v; want an error naming %s and the entry %q", what, err, file, name)
				}
			}
			if _, err := os.Stat(filepath.Join(root, "public")); err == nil {
				t.Errorf("a build with a hostile entry wrote the site")
			}
			if _, err := os.Stat(filepath.Join(root, "x")); err == nil {
				t.Errorf("a file was written outside the site")
			}
		})
	}
}

// A rebuild keeps the trajectory pages of an archive that did not change
// and renders again those of one that did.
func TestTrajectoryRebuild(t *testing.T) {
	root := fixtureRoot(t, map[string]string{trajSub + "trajectories.tar.gz": string(packTrajectory(t, trajectoryLines(t, "Done")))})
	opts := fixtureOptions(t, root)
	build(t, opts)
	pagePath := filepath.Join(root, "public", filepath.FromSlash(trajPage), "index.html")
	rawPath := filepath.Join(root, "public", filepath.FromSlash(trajPage), "trajectory.jsonl")
	stat := func(p string) os.FileInfo {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	page0, raw0 := stat(pagePath), stat(rawPath)

	// Another submission's metadata changes: the trajectory is kept.
	meta := filepath.Join(root, "data/submissions/demo/v1/full/20260302_sys-b/metadata.toml")
	old, _ := os.ReadFile(meta)
	if err := os.WriteFile(meta, bytes.Replace(old, []byte(`passed = "75.25"`), []byte(`passed = "75.5"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := build(t, opts)
	if rep.UpToDate || rep.Kept == 0 {
		t.Fatalf("rebuild %+v: want a build that keeps pages", rep)
	}
	if !os.SameFile(page0, stat(pagePath)) || !os.SameFile(raw0, stat(rawPath)) {
		t.Errorf("the trajectory page or file was written again though its archive did not change")
	}

	// The archive changes: its page shows the new answer.
	arch := filepath.Join(root, filepath.FromSlash(trajSub), "trajectories.tar.gz")
	if err := os.WriteFile(arch, packTrajectory(t, trajectoryLines(t, "Finished")), 0o644); err != nil {
		t.Fatal(err)
	}
	build(t, opts)
	if os.SameFile(page0, stat(pagePath)) {
		t.Errorf("the trajectory page was kept though its archive changed")
	}
	if page := readPage(t, filepath.Join(root, "public"), trajPage); !strings.Contains(page, "Finished") || strings.Contains(page, "Done ") {
		t.Errorf("the rebuilt trajectory page does not show the new trajectory")
	}
}
