package patch_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/patch"
)

// These tests run the real git and GNU patch, as the harness does inside
// its containers, in temporary folders. They skip when git (or patch)
// is not installed.

// secret is the content of a file outside the sandbox's repository: seen
// inside it, a patch read outside.
const secret = "secret outside the repository\n"

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
}

// gitEnv runs git without the user's or system's configuration, with a
// fixed identity, so tests see the same git everywhere.
func gitEnv(home string) []string {
	env := []string{"HOME=" + home, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid",
		"LC_ALL=C"}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return env
}

// run runs argv in dir and returns its output and exit code; it fails the
// test only when the command cannot run at all.
func run(t *testing.T, dir string, argv ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("%q: %v", argv, err)
	return "", 0
}

func mustRun(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	out, code := run(t, dir, argv...)
	if code != 0 {
		t.Fatalf("%q in %s: exit %d\n%s", argv, dir, code, out)
	}
	return out
}

// sandbox makes root/repo, a repository with x.py ("a\nb\n") committed,
// beside root/outside.py, which holds the secret.
func sandbox(t *testing.T) (root, repo string) {
	t.Helper()
	root = t.TempDir()
	repo = filepath.Join(root, "repo")
	writeFile(t, filepath.Join(root, "outside.py"), secret)
	writeFile(t, filepath.Join(repo, "x.py"), "a\nb\n")
	mustRun(t, repo, "git", "init", "-q")
	mustRun(t, repo, "git", "add", "-A")
	mustRun(t, repo, "git", "commit", "-q", "-m", "base")
	return root, repo
}

func writeFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot maps every file and link under dir (but skip) to its content
// or target.
func snapshot(t *testing.T, dir string, skip func(rel string) bool) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel != "." && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			m[rel] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// outsideRepo skips the repository and the patch file under the root.
func outsideRepo(rel string) bool { return rel == "repo" || rel == "p.diff" }

// gitMetadata skips what git itself rewrites in .git while applying and
// resetting: objects, the index, logs.
func gitMetadata(rel string) bool {
	return rel == "objects" || rel == "logs" || rel == "index" || rel == "ORIG_HEAD"
}

// chain runs the apply chain as the harness does and returns the method
// that applied the patch, or "".
func chain(t *testing.T, repo, file string) string {
	t.Helper()
	for i, c := range patch.ApplyCommands(file) {
		if i > 0 {
			mustRun(t, repo, patch.ResetCommand("")...)
		}
		if _, code := run(t, repo, c.Argv...); code != 0 {
			continue
		}
		if c.LeavesRejects {
			ls := mustRun(t, repo, patch.LeftoversCommand()...)
			raw, _ := os.ReadFile(file)
			p, _ := patch.Parse(raw)
			if len(patch.Leftovers([]byte(ls), p)) > 0 {
				continue
			}
		}
		return c.Method
	}
	return ""
}

// harm lists what applying did that must never happen, comparing the
// sandbox with its snapshots from before.
func harm(t *testing.T, root, repo string, outside, dotGit map[string]string) []string {
	t.Helper()
	var out []string
	for rel, text := range snapshot(t, root, outsideRepo) {
		if outside[rel] != text {
			out = append(out, fmt.Sprintf("wrote %s outside the repository", rel))
		}
	}
	for rel, text := range snapshot(t, filepath.Join(repo, ".git"), gitMetadata) {
		if dotGit[rel] != text {
			out = append(out, fmt.Sprintf("wrote .git/%s", rel))
		}
	}
	for rel, text := range snapshot(t, repo, func(rel string) bool { return rel == ".git" }) {
		switch {
		case strings.HasPrefix(text, "-> "):
			out = append(out, fmt.Sprintf("created the symbolic link %s %s", rel, text))
		case strings.ContainsFunc(rel, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }):
			out = append(out, fmt.Sprintf("created a file named %q", rel))
		case text == secret:
			out = append(out, fmt.Sprintf("copied a file from outside the repository into %s", rel))
		}
	}
	return out
}

// numstat is what `git apply --numstat` says a patch touches: each file
// (new name, or old name when deleted) with its added and removed lines,
// "-" for binary.
func numstat(t *testing.T, dir string, raw []byte) ([]string, bool) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "p.diff")
	if err := os.WriteFile(f, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "apply", "--numstat", "-z", f)
	cmd.Dir, cmd.Env = dir, gitEnv(dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		return nil, false
	}
	out := string(stdout)
	var files []string
	fields := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	for i := 0; i < len(fields); i++ {
		counts, name := fields[i], ""
		if strings.HasSuffix(counts, "\t") { // a rename or copy: old, then new
			name = fields[i+2]
			i += 2
		} else {
			c := strings.SplitN(counts, "\t", 3)
			counts, name = c[0]+"\t"+c[1]+"\t", c[2]
		}
		files = append(files, counts+name)
	}
	return files, true
}

// ours is Parse's reading in numstat's form.
func ours(p *patch.Patch) []string {
	var out []string
	for _, f := range p.Files {
		a, r := strconv.Itoa(f.Added), strconv.Itoa(f.Removed)
		if f.Binary {
			a, r = "-", "-"
		}
		out = append(out, a+"\t"+r+"\t"+f.Path())
	}
	return out
}

// Every path Check refuses is dangerous or unsupported, as real git and
// GNU patch show in a sandbox: git refuses it, or the apply chain does
// harm with it, or git reads other files than it names, or it applies as
// nothing.
func TestRefusedPathsAreUnsafe(t *testing.T) {
	needTool(t, "git")
	needTool(t, "patch")
	for _, tc := range hostile {
		if tc.why == notAPath {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			root, repo := sandbox(t)
			diff := strings.ReplaceAll(tc.diff, "ROOT", root)
			hostilePath := strings.ReplaceAll(tc.path, "ROOT", root)
			file := filepath.Join(root, "p.diff")
			writeFile(t, file, diff)
			outside := snapshot(t, root, outsideRepo)
			dotGit := snapshot(t, filepath.Join(repo, ".git"), gitMetadata)

			checkOut, checkCode := run(t, repo, "git", "apply", "--check", file)
			files, parsed := numstat(t, repo, []byte(diff))
			method := chain(t, repo, file)
			harmDone := harm(t, root, repo, outside, dotGit)
			status := mustRun(t, repo, "git", "status", "--porcelain", "--untracked-files=all")
			t.Logf("git apply --check: exit %d %s; numstat %q; the chain applied it with %q; harm: %q",
				checkCode, strings.TrimSpace(checkOut), files, method, harmDone)

			switch tc.why {
			case gitRefuses:
				if checkCode == 0 {
					t.Errorf("git apply --check accepts it")
				}
			case harmful:
				if len(harmDone) == 0 {
					t.Errorf("the apply chain (%q) did no harm", method)
				}
			case contradictory:
				if checkCode != 0 || !parsed {
					t.Fatalf("git refuses it (%s): mark it gitRefuses", checkOut)
				}
				if len(harmDone) > 0 {
					t.Errorf("it did harm: mark it harmful")
				}
				for _, f := range files {
					if strings.HasSuffix(f, "\t"+hostilePath) {
						t.Errorf("git touches %q, the path the patch names; it is not contradictory", hostilePath)
					}
				}
				if !strings.Contains(diff, hostilePath) {
					t.Errorf("the patch does not name %q", hostilePath)
				}
			case inert:
				if checkCode != 0 || method != patch.MethodGitApply {
					t.Errorf("git does not apply it (exit %d, method %q)", checkCode, method)
				}
				if strings.TrimSpace(status) != "" {
					t.Errorf("it changed the tree:\n%s", status)
				}
			}
		})
	}
}

// base makes the base of an example instance in a repository, as cmd/eval
// does for the example's layout: for level 1, the example project with the
// instance's test patch and patch reversed; for level 2, an empty folder
// (the agent's package starts from nothing) beside the complete project,
// which the test patch applies to.
func base(t *testing.T, e example) (dir, tests string) {
	t.Helper()
	complete := func(name string) string {
		dir := filepath.Join(t.TempDir(), name)
		src := filepath.Join(repoRoot, "examples/textkit")
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if n := d.Name(); n == "__pycache__" || n == ".pytest_cache" || strings.HasSuffix(n, ".egg-info") || n == "build" || n == "dist" {
				return filepath.SkipDir
			}
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(dir, rel), 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		mustRun(t, dir, "git", "init", "-q")
		return dir
	}
	commit := func(dir string) {
		mustRun(t, dir, "git", "add", "-A")
		mustRun(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "base of "+e.ID)
	}
	if strings.HasSuffix(e.ID, ".lv2") {
		dir = filepath.Join(t.TempDir(), "agent")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		mustRun(t, dir, "git", "init", "-q")
		commit(dir)
		tests = complete("textkit")
		commit(tests)
		return dir, tests
	}
	dir = complete("textkit")
	for _, raw := range []string{e.TestPatch, e.Patch} {
		f := filepath.Join(t.TempDir(), "p.diff")
		writeFile(t, f, raw)
		mustRun(t, dir, "git", "apply", "-R", f)
	}
	commit(dir)
	return dir, dir
}

// Check accepts every example prediction git applies to its instance's
// base, and the gold and test patches; Parse reads each as git does.
func TestExamplesWithGit(t *testing.T) {
	needTool(t, "git")
	preds := examplePredictions(t)
	for _, e := range readExamples(t) {
		t.Run(e.ID, func(t *testing.T) {
			dir, tests := base(t, e)
			try := func(name, in string, raw []byte) {
				f := filepath.Join(t.TempDir(), "p.diff")
				if err := os.WriteFile(f, raw, 0o644); err != nil {
					t.Fatal(err)
				}
				out, code := run(t, in, "git", "apply", "--check", f)
				err := patch.Check(raw, patch.Limits{})
				if code == 0 && err != nil {
					t.Errorf("%s: git applies it, Check refuses it: %v", name, err)
				}
				if code != 0 {
					t.Logf("%s: git does not apply it: %s", name, strings.TrimSpace(out))
				}
				p, perr := patch.Parse(raw)
				want, ok := numstat(t, in, raw)
				if ok && (perr != nil || !reflect.DeepEqual(ours(p), want)) {
					t.Errorf("%s: Parse reads %q (%v), git %q", name, ours(p), perr, want)
				}
			}
			try("patch", dir, []byte(e.Patch))
			try("test_patch", tests, []byte(e.TestPatch))
			// The gold patch and the test patch apply in turn.
			for i, raw := range []string{e.Patch, e.TestPatch} {
				f := filepath.Join(t.TempDir(), "p.diff")
				writeFile(t, f, raw)
				in := dir
				if i == 1 {
					in = tests
				}
				if m := chain(t, in, f); m != patch.MethodGitApply {
					t.Errorf("the gold patches apply with %q", m)
				}
			}
			mustRun(t, dir, patch.ResetCommand("")...)
			n := 0
			for _, pr := range preds {
				if pr.id == e.ID {
					try(pr.name, dir, pr.patch)
					n++
				}
			}
			t.Logf("%d predictions", n)
		})
	}
}

// Parse reads the table's diffs as `git apply --numstat` does, where git
// reads them at all.
func TestParseAgreesWithGit(t *testing.T) {
	needTool(t, "git")
	dir := t.TempDir()
	for _, tc := range parseCases {
		if tc.git != "" {
			t.Logf("%s: %s", tc.name, tc.git)
			continue
		}
		want, ok := numstat(t, dir, []byte(tc.diff))
		if !ok {
			t.Logf("%s: git does not read it", tc.name)
			continue
		}
		p, err := patch.Parse([]byte(tc.diff))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := ours(p); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Parse reads %q, git %q", tc.name, got, want)
		}
	}
}

// The chain picks the first method that works, and resets between tries.
func TestApplyChain(t *testing.T) {
	needTool(t, "git")
	needTool(t, "patch")
	lines := func(change map[int]string) string {
		var b strings.Builder
		for i := 1; i <= 12; i++ {
			s := "line " + strconv.Itoa(i)
			if c, ok := change[i]; ok {
				s = c
			}
			b.WriteString(s + "\n")
		}
		return b.String()
	}
	// A patch made with git against the base: it carries the blobs'
	// ids, so --3way can merge it.
	_, repo := sandbox(t)
	writeFile(t, filepath.Join(repo, "f.txt"), lines(nil))
	mustRun(t, repo, "git", "add", "-A")
	mustRun(t, repo, "git", "commit", "-q", "-m", "f")
	writeFile(t, filepath.Join(repo, "f.txt"), lines(map[int]string{6: "CHANGED"}))
	gitPatch := mustRun(t, repo, "git", "diff")
	mustRun(t, repo, "git", "checkout", "-q", ".")
	pfile := filepath.Join(t.TempDir(), "p.diff")

	try := func(name, diff string, setup map[int]string, want string) {
		t.Helper()
		mustRun(t, repo, "git", "reset", "-q", "--hard", "HEAD")
		if setup != nil {
			writeFile(t, filepath.Join(repo, "f.txt"), lines(setup))
			mustRun(t, repo, "git", "commit", "-q", "--allow-empty", "-am", name)
		}
		writeFile(t, pfile, diff)
		if got := chain(t, repo, pfile); got != want {
			t.Errorf("%s: applied with %q, want %q", name, got, want)
		}
		if want == "" {
			mustRun(t, repo, patch.ResetCommand("")...)
			if st := mustRun(t, repo, "git", "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Errorf("%s: the reset after a failed chain left changes:\n%s", name, st)
			}
		} else if b, _ := os.ReadFile(filepath.Join(repo, "f.txt")); !strings.Contains(string(b), "CHANGED\n") {
			t.Errorf("%s: the change is missing:\n%s", name, b)
		}
		mustRun(t, repo, "git", "reset", "-q", "--hard", "HEAD~0")
	}
	try("exact", gitPatch, nil, patch.MethodGitApply)
	// Line 3 changed in the tree: inside the patch's context, so plain git
	// apply fails, but a merge of non-overlapping changes succeeds.
	try("drifted, with blobs", gitPatch, map[int]string{3: "drift"}, patch.MethodGitApply3Way)
	// The same drift without blob ids: only GNU patch's fuzz applies it.
	noIndex := dropIndexLines(gitPatch)
	try("drifted, without blobs", noIndex, map[int]string{3: "drift"}, patch.MethodPatch)
	// Context that matches nowhere: nothing applies it, and the tree is
	// left as it was.
	// A removed line that is nowhere: nothing applies it (fuzz only
	// forgives context), and the tree is left as it was.
	try("no match", strings.Replace(noIndex, "-line 6\n", "-no such line\n", 1), nil, "")
}

// dropIndexLines drops the "index" line of a git diff.
func dropIndexLines(diff string) string {
	var b strings.Builder
	for l := range strings.Lines(diff) {
		if !strings.HasPrefix(l, "index ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// GNU patch that rejects a hunk leaves a .rej file Leftovers finds; the
// reset removes it, keeps the harness's folder and ignored files.
func TestLeftoversAndReset(t *testing.T) {
	needTool(t, "git")
	needTool(t, "patch")
	_, repo := sandbox(t)
	writeFile(t, filepath.Join(repo, ".gitignore"), "*.rej\nbuild/\n")
	mustRun(t, repo, "git", "add", "-A")
	mustRun(t, repo, "git", "commit", "-q", "-m", "ignore")
	writeFile(t, filepath.Join(repo, "build/out.txt"), "kept\n")
	writeFile(t, filepath.Join(repo, ".fb/p.diff"),
		"--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-nothing\n+here\n")
	writeFile(t, filepath.Join(repo, "y.py"), "something\n")
	steps := patch.ApplyCommands(".fb/p.diff")
	last := steps[len(steps)-1]
	if _, code := run(t, repo, last.Argv...); code == 0 {
		t.Fatal("patch applied a hunk that cannot apply")
	}
	ls := mustRun(t, repo, patch.LeftoversCommand()...)
	raw, _ := os.ReadFile(filepath.Join(repo, ".fb/p.diff"))
	p, err := patch.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := patch.Leftovers([]byte(ls), p); !slices.Equal(got, []string{"y.py.rej"}) {
		t.Errorf("Leftovers = %q, want the ignored y.py.rej; ls-files:\n%q", got, ls)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "x.py")); string(b) != "a\nc\n" {
		t.Errorf("patch did not apply the hunk it could: %q", b)
	}

	mustRun(t, repo, patch.ResetCommand(".fb")...)
	if b, _ := os.ReadFile(filepath.Join(repo, "x.py")); string(b) != "a\nb\n" {
		t.Errorf("the reset left x.py as %q", b)
	}
	for name, want := range map[string]bool{".fb/p.diff": true, "build/out.txt": true, "y.py": false, "y.py.rej": true} {
		_, err := os.Stat(filepath.Join(repo, name))
		if got := err == nil; got != want {
			t.Errorf("after the reset, %s exists: %v, want %v", name, got, want)
		}
	}
}

// The methods' names are the ones results.jsonl accepts.
func TestMethodNames(t *testing.T) {
	var got []string
	for _, c := range patch.ApplyCommands("/fb/prediction.diff") {
		got = append(got, c.Method)
		if !slices.Contains(c.Argv, "/fb/prediction.diff") {
			t.Errorf("%s: %q does not name the file", c.Method, c.Argv)
		}
	}
	if !slices.Equal(got, bench.ApplyMethods) {
		t.Errorf("methods %q, bench.ApplyMethods %q", got, bench.ApplyMethods)
	}
}

func TestLeftoversOwnFiles(t *testing.T) {
	p, err := patch.Parse([]byte("diff --git a/keep.orig b/keep.orig\nnew file mode 100644\n--- /dev/null\n+++ b/keep.orig\n@@ -0,0 +1 @@\n+x\n"))
	if err != nil {
		t.Fatal(err)
	}
	ls := []byte("keep.orig\x00a.py.rej\x00b.py.orig\x00c.py\x00")
	if got := patch.Leftovers(ls, p); !slices.Equal(got, []string{"a.py.rej", "b.py.orig"}) {
		t.Errorf("Leftovers = %q", got)
	}
	if got := patch.Leftovers(nil, nil); got != nil {
		t.Errorf("Leftovers of nothing = %q", got)
	}
}
