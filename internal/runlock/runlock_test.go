package runlock_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/runlock"
)

// TestAcquire: a second holder is refused with who holds it; after the
// release, or the holder's death, the folder can be taken again.
func TestAcquire(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "r1")
	release, err := runlock.Acquire(dir, "eval run r1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runlock.Acquire(dir, "eval run r1"); !errors.Is(err, runlock.ErrHeld) || !strings.Contains(err.Error(), "eval run r1, process ") {
		t.Fatalf("a second acquire: %v", err)
	}
	release()
	again, err := runlock.Acquire(dir, "eval run r1")
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	again()
}

// TestHolderKilled: a process holding the lock is SIGKILLed; the lock goes
// with it.
func TestHolderKilled(t *testing.T) {
	if os.Getenv("RUNLOCK_HOLD") != "" {
		if _, err := runlock.Acquire(os.Getenv("RUNLOCK_HOLD"), "the child"); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHolderKilled$")
	cmd.Env = append(os.Environ(), "RUNLOCK_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("the child did not take the lock: %q %v", buf, err)
	}
	if _, err := runlock.Acquire(dir, "the parent"); !errors.Is(err, runlock.ErrHeld) || !strings.Contains(err.Error(), "the child") {
		t.Fatalf("while the child holds it: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	release, err := runlock.Acquire(dir, "the parent")
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	release()
}
