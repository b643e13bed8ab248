package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func runCollect(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestUsage(t *testing.T) {
	if _, errOut, code := runCollect("import", "--help"); code != 0 || !strings.Contains(errOut, "--featurebench") || !strings.Contains(errOut, "docker login") {
		t.Errorf("import --help: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runCollect("import", "--dataset", "fb/v1"); code != 2 || !strings.Contains(errOut, "--featurebench FILE and --dataset NAME/VERSION are required") {
		t.Errorf("import without a file: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runCollect("--help"); code != 0 || !strings.Contains(errOut, "--dataset") || !strings.Contains(errOut, "Stages: env, discover") {
		t.Errorf("--help: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runCollect(); code != 2 || !strings.Contains(errOut, "--dataset NAME/VERSION is required") {
		t.Errorf("no flags: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runCollect("--dataset", "x/v1", "extra"); code != 2 || !strings.Contains(errOut, `unexpected argument "extra"`) {
		t.Errorf("extra argument: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runCollect("graph", "--repo", "o/r"); code != 2 || !strings.Contains(errOut, "--repo and --file are required") {
		t.Errorf("graph without --file: exit %d\n%s", code, errOut)
	}
}

// TestIndexCommand: collect index serves a folder as an index until
// interrupted, and refuses a missing folder.
func TestIndexCommand(t *testing.T) {
	if _, errOut, code := runCollect("index", "--dir", filepath.Join(t.TempDir(), "none")); code != 1 || !strings.Contains(errOut, "not a folder") {
		t.Errorf("a missing folder: exit %d\n%s", code, errOut)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "demo-1.0-py3-none-any.whl"), []byte("not really a wheel"), 0o644)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- cmdIndex(ctx, []string{"--dir", dir, "--addr", addr}, &out, io.Discard) }()
	var body []byte
	for i := 0; i < 100; i++ {
		res, err := http.Get("http://" + addr + "/simple/demo/")
		if err == nil {
			body, _ = io.ReadAll(res.Body)
			res.Body.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), "demo-1.0-py3-none-any.whl#sha256=") || !strings.Contains(out.String(), "/simple/") {
		t.Errorf("page %q, output %q", body, out.String())
	}
}

// TestProjectConfig checks that the project's own featbench.toml describes
// a repository to collect from, so the README's command runs.
func TestProjectConfig(t *testing.T) {
	cfg, err := projectFlags{root: "../.."}.load()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Collect.Repos) == 0 || cfg.Collect.Repos[0].Repository != "featbench/textkit" {
		t.Errorf("collect.repo = %+v", cfg.Collect.Repos)
	}
}

func TestGraphWithoutWork(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := runCollect("graph", "--root", "../..", "--work", dir, "--repo", "featbench/textkit", "--file", "tests/test_slug.py")
	if code != 1 || !strings.Contains(errOut, "run the trace stage first") {
		t.Errorf("graph on an empty work folder: exit %d\n%s", code, errOut)
	}
}
