package infer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWatchFetch: while npm fills a node_modules folder, the watcher
// says how many packages (scoped ones too, nested ones too, not a
// package's own sub-folders with a package.json) and bytes it holds so
// far, every interval, and nothing once stopped; a zero interval watches
// nothing.
func TestWatchFetch(t *testing.T) {
	modules := filepath.Join(t.TempDir(), "node_modules")
	var mu sync.Mutex
	var lines []string
	stop := watchFetch(modules, 20*time.Millisecond, func(pkgs int, size int64, elapsed time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, strings.Join([]string{strconv.Itoa(pkgs), strconv.FormatInt(size, 10)}, " "))
	})
	seen := func(want string) bool {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			n := len(lines)
			last := ""
			if n > 0 {
				last = lines[n-1]
			}
			mu.Unlock()
			if last == want {
				return true
			}
		}
		return false
	}
	if !seen("0 0") {
		t.Fatalf("an empty (missing) folder: %v", lines)
	}
	write := func(p string, n int) {
		t.Helper()
		full := filepath.Join(modules, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("left-pad/package.json", 10)
	write("left-pad/index.js", 90)
	write("left-pad/lib/package.json", 5) // a sub-folder's, not a package
	write("@anthropic-ai/sdk/package.json", 100)
	write("@anthropic-ai/sdk/node_modules/undici/package.json", 200)
	if !seen("3 405") {
		t.Fatalf("three packages of 405 bytes: %v", lines)
	}
	stop()
	mu.Lock()
	n := len(lines)
	mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != n {
		t.Errorf("the watcher spoke after it was stopped")
	}

	called := false
	watchFetch(modules, 0, func(int, int64, time.Duration) { called = true })()
	if called {
		t.Error("a zero interval watched")
	}
}
