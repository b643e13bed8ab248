package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/synth"
)

func TestHelpListsEveryFlag(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "-help"} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{arg}, &stdout, &stderr); code != 0 {
			t.Errorf("build %s exits %d, want 0 (stderr %q)", arg, code, stderr.String())
		}
		out := stdout.String()
		if !strings.HasPrefix(out, usageLine) {
			t.Errorf("build %s does not start with the usage line:\n%s", arg, out)
		}
		newFlagSet(&flags{}).VisitAll(func(f *flag.Flag) {
			if !strings.Contains(out, "  -"+f.Name) {
				t.Errorf("build %s does not describe -%s:\n%s", arg, f.Name, out)
			}
		})
	}
}

// TestUsageNamesEveryFlag keeps the usage line complete when a flag is
// added.
func TestUsageNamesEveryFlag(t *testing.T) {
	newFlagSet(&flags{}).VisitAll(func(f *flag.Flag) {
		if !strings.Contains(usageLine, "[--"+f.Name+"]") && !strings.Contains(usageLine, "[--"+f.Name+" ") {
			t.Errorf("the usage line does not mention --%s:\n%s", f.Name, usageLine)
		}
	})
}

func TestMisuseExitsTwo(t *testing.T) {
	for _, args := range [][]string{{"--nope"}, {"stray"}, {"--serve"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 {
			t.Errorf("build %v exits %d, want 2", args, code)
		}
		if !strings.Contains(stderr.String(), usageLine) || stdout.Len() != 0 {
			t.Errorf("build %v: stdout %q, stderr %q; want the usage on stderr", args, stdout.String(), stderr.String())
		}
	}
}

// project generates a synthetic project that shares the checkout's npm
// install of the chart library.
func project(t *testing.T, instances, submissions int) string {
	t.Helper()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := synth.Generate(root, synth.Config{RepoRoot: repo, Instances: instances, Submissions: submissions, LiteSize: instances / 4}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, ".cache", "npm"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, ".cache", "npm"), filepath.Join(root, ".cache", "npm")); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestBuildPointsToServe checks the build's last line: the command that
// serves the site and its URL under the base path, not a file to open.
func TestBuildPointsToServe(t *testing.T) {
	root := project(t, 20, 2)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--root", root}, &stdout, &stderr); code != 0 {
		t.Fatalf("build exits %d: %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "go run ./cmd/build --serve localhost:8080 --root "+root) ||
		!regexp.MustCompile(`then open http://localhost:8080/(\S*/)?$`).MatchString(last) {
		t.Errorf("last line %q; want the --serve command and the URL", last)
	}
	if strings.Contains(stdout.String(), "index.html") {
		t.Errorf("the build suggests opening a file:\n%s", stdout.String())
	}
}

func TestAttestPrintsTheEntry(t *testing.T) {
	root := project(t, 20, 2)
	subs, err := filepath.Glob(filepath.Join(root, "data", "submissions", "*", "*", "*", "*"))
	if err != nil || len(subs) == 0 {
		t.Fatalf("no submission in the synthetic project (%v)", err)
	}
	rel, _ := filepath.Rel(filepath.Join(root, "data", "submissions"), subs[0])
	id := filepath.ToSlash(rel)
	want, err := bench.SubmissionHash(filepath.Join(root, "data"), id)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--root", root, "--attest", id}, &stdout, &stderr); code != 0 {
		t.Fatalf("build --attest exits %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, s := range []string{"[[checked]]\n", `submission = "` + id + `"`, `sha256 = "` + want + `"`, "by = ", "date = " + time.Now().Format("2006-01-02")} {
		if !strings.Contains(out, s) {
			t.Errorf("build --attest printed\n%s\nwant %q in it", out, s)
		}
	}
	if code := run([]string{"--root", root, "--attest", "no/such/sub/x"}, &stdout, &stderr); code != 1 {
		t.Errorf("build --attest of a missing submission exits %d, want 1", code)
	}
}

// A published dataset version is locked: --lock prints its entry, --check
// warns about a version without one and fails when a locked file changes,
// naming the file and the version.
func TestCheckHonoursTheLock(t *testing.T) {
	root := project(t, 20, 2)
	dirs, err := filepath.Glob(filepath.Join(root, "data", "datasets", "*", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no dataset in the synthetic project (%v)", err)
	}
	rel, _ := filepath.Rel(filepath.Join(root, "data", "datasets"), dirs[0])
	key := filepath.ToSlash(rel)
	check := func(wantCode int) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run([]string{"--root", root, "--check"}, &stdout, &stderr); code != wantCode {
			t.Fatalf("build --check exits %d, want %d: %s", code, wantCode, stderr.String())
		}
		return stderr.String()
	}
	lockFile := filepath.Join(root, "data", bench.LockFile)
	if err := os.WriteFile(lockFile, []byte("# nothing published yet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := check(0); !strings.Contains(out, "warning: dataset "+key+" is not in data/"+bench.LockFile+": unpublished") {
		t.Errorf("build --check does not report %s unpublished:\n%s", key, out)
	}

	var stdout, stderr bytes.Buffer
	if code := run([]string{"--root", root, "--lock", key}, &stdout, &stderr); code != 0 {
		t.Fatalf("build --lock exits %d: %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "[[locked]]\ndataset = \""+key+"\"\n") {
		t.Errorf("build --lock printed\n%s", stdout.String())
	}
	if err := os.WriteFile(lockFile, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := check(0); strings.Contains(out, "dataset "+key+" is not in") {
		t.Errorf("build --check reports the locked %s unpublished:\n%s", key, out)
	}

	inst := filepath.Join(dirs[0], bench.InstancesFile)
	raw, err := os.ReadFile(inst)
	if err != nil {
		t.Fatal(err)
	}
	// A valid instance still: only its problem statement gains a word.
	edited := bytes.Replace(raw, []byte(`"problem_statement":"`), []byte(`"problem_statement":"Easy. `), 1)
	if bytes.Equal(edited, raw) {
		t.Fatalf("no problem statement in %s", inst)
	}
	if err := os.WriteFile(inst, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := check(1); !strings.Contains(out, inst+": differs from the published dataset version "+key) {
		t.Errorf("build --check with an edited locked file says:\n%s", out)
	}
	if code := run([]string{"--root", root, "--lock", "no/such"}, &stdout, &stderr); code != 1 {
		t.Errorf("build --lock of a missing dataset version exits %d, want 1", code)
	}
}

// tree hashes every file under dir and lists every folder.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			m[rel] = "dir"
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(raw)
		m[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func diffTrees(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if b[k] != v {
			d = append(d, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, k)
		}
	}
	return d
}

// TestKilledBuildLeavesSiteWhole builds the real binary, and SIGKILLs it
// in the middle of rebuilds on a synthetic project large enough to be
// caught writing: the published site must be the previous one, byte for
// byte, and the next build must succeed and leave nothing behind. The
// second round kills a build that started from the previous site kept
// as its stage.
func TestKilledBuildLeavesSiteWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a large synthetic project")
	}
	bin := filepath.Join(t.TempDir(), "build")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := project(t, 1500, 15)
	out := filepath.Join(root, "public")
	cfg := filepath.Join(root, "featbench.toml")
	// build runs a build to its end and returns how long it took.
	build := func() time.Duration {
		t.Helper()
		start := time.Now()
		if msg, err := exec.Command(bin, "--root", root).CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, msg)
		}
		return time.Since(start)
	}
	// retitle changes every page, so that a rebuild writes all of them.
	n := 0
	retitle := func() string {
		n++
		raw, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		title := "Title " + strings.Repeat("x", n)
		re := regexp.MustCompile(`(?m)^title = .*$`)
		if !re.Match(raw) {
			raw = append([]byte("[site]\ntitle = \"\"\n"), raw...)
		}
		raw = re.ReplaceAll(raw, []byte(`title = "`+title+`"`))
		if err := os.WriteFile(cfg, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return title
	}
	build()
	for round := 1; round <= 2; round++ {
		retitle()
		// A rebuild of every page, timed: the kills below land at a
		// share of its time, while it writes.
		took := build()
		if round == 1 {
			// The first rebuild had no previous site to start from;
			// this one keeps one for the next as its stage.
			retitle()
			took = build()
		}
		before := tree(t, out)
		retitle()
		// Kill at growing shares of a rebuild's time until a build is
		// caught writing (its stage exists); every kill must leave the
		// published site as it was.
		caught := false
		for attempt := 0; attempt < 8 && !caught; attempt++ {
			cmd := exec.Command(bin, "--root", root)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			stage := out + ".stage-" + strconv.Itoa(cmd.Process.Pid)
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			time.Sleep(took * time.Duration(40+10*attempt) / 100)
			_, err := os.Stat(stage)
			writing := err == nil
			_ = cmd.Process.Signal(syscall.SIGKILL)
			err = <-exited
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
				// It finished first: the change is published. Change
				// again and retry.
				before = tree(t, out)
				retitle()
				continue
			}
			if d := diffTrees(tree(t, out), before); len(d) > 0 {
				if len(d) > 5 {
					d = d[:5]
				}
				t.Fatalf("round %d: a build killed after %d%% of a rebuild's time changed the published site: %v", round, 40+10*attempt, d)
			}
			caught = writing
		}
		if !caught {
			t.Fatalf("round %d: no build was caught writing", round)
		}
		title := retitle()
		build()
		left, _ := filepath.Glob(out + ".*")
		if len(left) > 0 {
			t.Errorf("round %d: left beside the site: %v", round, left)
		}
		after := tree(t, out)
		for rel := range after {
			if rel != "." && strings.HasPrefix(filepath.Base(rel), ".") {
				t.Errorf("round %d: published %s", round, rel)
			}
		}
		index, err := os.ReadFile(filepath.Join(out, "index.html"))
		if err != nil || !bytes.Contains(index, []byte(title)) {
			t.Errorf("round %d: the next build did not publish the new title (%v)", round, err)
		}
	}
}
