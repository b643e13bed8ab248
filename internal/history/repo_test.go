package history

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testRepo is a git repository a test builds, commit by commit, with
// fixed dates so that its hashes are the same on every run.
type testRepo struct {
	t   *testing.T
	dir string
	now time.Time
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &testRepo{t: t, dir: t.TempDir(), now: time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)}
	r.git("init", "-q", "-b", "main")
	return r
}

// git runs git in the repository at the current fake time.
func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir, "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
	date := r.now.Format(time.RFC3339)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.invalid", "GIT_COMMITTER_NAME=C", "GIT_COMMITTER_EMAIL=c@example.invalid",
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// write writes files (path, content pairs; "" content deletes).
func (r *testRepo) write(pairs ...string) {
	r.t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		p := filepath.Join(r.dir, filepath.FromSlash(pairs[i]))
		if pairs[i+1] == "" {
			if err := os.Remove(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(pairs[i+1]), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// commit commits everything with a message, a day after the last commit,
// and returns its hash.
func (r *testRepo) commit(msg string) string {
	r.t.Helper()
	r.now = r.now.Add(24 * time.Hour)
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// merge merges a branch into the current one with a message, no fast
// forward.
func (r *testRepo) merge(branch, msg string) string {
	r.t.Helper()
	r.now = r.now.Add(24 * time.Hour)
	r.git("merge", "-q", "--no-ff", "-m", msg, branch)
	return r.git("rev-parse", "HEAD")
}

// tag makes an annotated tag (message "") or a lightweight one.
func (r *testRepo) tag(name, msg string) {
	r.t.Helper()
	r.now = r.now.Add(time.Hour)
	if msg == "" {
		r.git("tag", name)
		return
	}
	r.git("tag", "-a", name, "-m", msg)
}

func (r *testRepo) g() Git { return Git{Dir: r.dir} }

// isTestPath is the rule the tests split by: a tests folder or a test_
// file.
func isTestPath(p string) bool {
	return strings.HasPrefix(p, "tests/") || strings.HasPrefix(filepath.Base(p), "test_")
}
