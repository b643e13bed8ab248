// Package runlock holds a run's folder for the one process that runs it:
// two `eval run` (or `eval infer`) of the same run id at once would both
// evaluate the same attempts into the same files. The lock is the
// kernel's (flock), so a process that dies, SIGKILL included, leaves no
// stale lock; the file says who holds it, for the message the second
// process prints.
package runlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// File is the lock's name in the run folder.
const File = ".lock"

// ErrHeld is what Acquire returns, wrapped, when another process holds
// the folder.
var ErrHeld = errors.New("the run is held by another process")

// Acquire locks dir (made if missing) for this process, writing who holds
// it (what, the process id, the host, the time) into the lock file. The
// returned release unlocks it; the lock also goes with the process.
func Acquire(dir, what string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	path := filepath.Join(dir, File)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	if err := lock(f); err != nil {
		f.Close()
		holder, _ := os.ReadFile(path)
		who := strings.TrimSpace(string(holder))
		if who == "" {
			who = "another process"
		}
		return nil, fmt.Errorf("%s: %w: %s", dir, ErrHeld, who)
	}
	host, _ := os.Hostname()
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "%s, process %d on %s, since %s\n", what, os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	}
	return func() {
		unlock(f)
		f.Close()
	}, nil
}
