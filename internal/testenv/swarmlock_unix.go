//go:build unix

package testenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// lockSwarm holds, until the test ends, a lock that every test of every
// package takes before it uses the swarm: `go test ./...` runs packages at
// once, and a swarm test counts the swarm's free room, drains or stops its
// nodes. Taken once per test (its subtests find it held).
func lockSwarm(t testing.TB) {
	t.Helper()
	if os.Getenv(swarmLocked) == "1" {
		return
	}
	path := filepath.Join(os.TempDir(), "featbench-swarm-tests.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("the swarm tests' lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("the swarm tests' lock %s: %v", path, err)
	}
	t.Setenv(swarmLocked, "1")
	t.Cleanup(func() { f.Close() }) // closing the file releases the lock
}
