package site_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/featbench/featbench/site"
)

// siteDir writes a small built site: pages, a 404 page, and dotfiles the
// server must never serve.
func siteDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for rel, body := range map[string]string{
		"index.html":            "home",
		"404.html":              "not found page",
		"datasets/index.html":   "datasets",
		"assets/style.css":      "css",
		".featbench-build.json": `{"inputs":"secret"}`,
		".git/config":           "secret",
		"assets/.hidden.js":     "secret",
		".well-known/x":         "secret",
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestHandler(t *testing.T) {
	dir := siteDir(t)
	for _, c := range []struct {
		base, path string
		status     int
		body       string // a prefix of the body; "" to skip
		location   string
	}{
		{"/featbench/", "/featbench/", 200, "home", ""},
		{"/featbench/", "/featbench/datasets/", 200, "datasets", ""},
		{"/featbench/", "/featbench/assets/style.css", 200, "css", ""},
		{"/featbench/", "/featbench/nope/", 404, "not found page", ""},
		{"/featbench/", "/", 302, "", "/featbench/"},
		{"/featbench/", "/featbench", 302, "", "/featbench/"},
		// The base path ends on a "/" boundary.
		{"/featbench/", "/featbenchX/", 404, "not found page", ""},
		{"/featbench/", "/featbenchX/index.html", 404, "", ""},
		{"/featbench/", "/featbenchassets/style.css", 404, "not found page", ""},
		{"/featbench/", "/featbenchdatasets/", 404, "not found page", ""},
		{"/featbench/", "/featbench-old/assets/style.css", 404, "", ""},
		{"/featbench/", "/other/", 404, "", ""},
		// No dotfile, however it is asked for.
		{"/featbench/", "/featbench/.featbench-build.json", 404, "not found page", ""},
		{"/featbench/", "/featbench/.git/config", 404, "", ""},
		{"/featbench/", "/featbench/assets/.hidden.js", 404, "", ""},
		{"/featbench/", "/featbench/.well-known/x", 404, "", ""},
		{"/featbench/", "/featbench/assets/../.featbench-build.json", 404, "", ""},
		{"/featbench/", "/featbench/%2efeatbench-build.json", 404, "", ""},
		{"/", "/", 200, "home", ""},
		{"/", "/datasets/", 200, "datasets", ""},
		{"/", "/.featbench-build.json", 404, "not found page", ""},
		{"/", "/.git/config", 404, "", ""},
		{"/", "/assets/.hidden.js", 404, "", ""},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "http://localhost"+c.path, nil)
		site.Handler(dir, c.base).ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != c.status || !strings.HasPrefix(body, c.body) || rec.Header().Get("Location") != c.location {
			t.Errorf("base %s GET %s: %d %q (Location %q); want %d %q (Location %q)",
				c.base, c.path, rec.Code, body, rec.Header().Get("Location"), c.status, c.body, c.location)
		}
		if strings.Contains(body, "secret") {
			t.Errorf("base %s GET %s served a dotfile", c.base, c.path)
		}
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		":8080":          "127.0.0.1:8080",
		"8080":           "127.0.0.1:8080",
		":0":             "127.0.0.1:0",
		"localhost:8080": "localhost:8080",
		"0.0.0.0:8080":   "0.0.0.0:8080",
		"[::]:8080":      "[::]:8080",
		"192.0.2.1:80":   "192.0.2.1:80",
	} {
		got, err := site.ListenAddr(in)
		if err != nil || got != want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"localhost", "", "a:b:c"} {
		if got, err := site.ListenAddr(bad); err == nil {
			t.Errorf("ListenAddr(%q) = %q, want an error", bad, got)
		}
	}
}

// syncBuffer is a log written by Serve while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeListensOnLocalhost runs Serve with an address without a host:
// it must listen on 127.0.0.1 only, say so, serve the site under its base
// path, and stop when its context ends.
func TestServeListensOnLocalhost(t *testing.T) {
	root := fixtureRoot(t, nil)
	opts := fixtureOptions(t, root)
	var log syncBuffer
	opts.Log = &log
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- site.Serve(ctx, opts, ":0") }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve returned %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not stop when its context ended")
		}
	}()
	addr := regexp.MustCompile(`serving on http://(127\.0\.0\.1:\d+)/sub/ \(this machine only`)
	var m []string
	for deadline := time.Now().Add(30 * time.Second); m == nil && time.Now().Before(deadline); {
		m = addr.FindStringSubmatch(log.String())
		time.Sleep(20 * time.Millisecond)
	}
	if m == nil {
		t.Fatalf("Serve did not say it serves on 127.0.0.1 only; log:\n%s", log.String())
	}
	resp, err := http.Get("http://" + m[1] + "/sub/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(bufio.NewReader(resp.Body))
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<html") {
		t.Errorf("GET /sub/: %d\n%.200s", resp.StatusCode, body)
	}
}
