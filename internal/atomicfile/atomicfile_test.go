package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLogKeepsTheFirstError: a log on a device that is always full
// (/dev/full) drops nothing silently: the first write's error is kept,
// later writes fail with it, and Close reports it, naming the file. A log
// on a working disk closes without error, whole.
func TestLogKeepsTheFirstError(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	l, err := CreateLog("/dev/full")
	if err != nil {
		t.Skipf("cannot open /dev/full for writing: %v", err)
	}
	fmt.Fprintf(l, "a line the disk has no room for\n") // Fprintf drops the error
	if _, err := l.Write([]byte("more")); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("a later write: %v, want the first error (no space)", err)
	}
	if err := l.Close(); !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "/dev/full") {
		t.Errorf("Close: %v, want no space naming /dev/full", err)
	}
	if err := l.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Close again: %v, want the same", err)
	}

	path := filepath.Join(t.TempDir(), "container.log")
	ok, err := CreateLog(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(ok, "one\n")
	fmt.Fprintf(ok, "two\n")
	if err := ok.Close(); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(path); string(raw) != "one\ntwo\n" {
		t.Errorf("the log holds %q", raw)
	}
	if _, err := ok.Write([]byte("late")); err == nil {
		t.Error("a write after Close succeeded")
	}
}
