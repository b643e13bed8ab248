package mask_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/mask"
)

// The script tests run the embedded masker with Debian's Python 3.11, the
// interpreter of the repositories' containers, on small repositories written
// to temporary folders. git, when installed, checks that the gold diff
// (masked -> original) restores each original exactly.

const hostPython = "/usr/bin/python3"

func needPython(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(hostPython); err != nil {
		t.Skipf("%s (Debian's Python 3.11, as in the repositories' containers) is missing: %v", hostPython, err)
	}
	return hostPython
}

func haveGit() bool {
	_, err := exec.LookPath("git")
	return err == nil
}

// repo is a fixture repository: path -> content.
type repo map[string]string

// write creates the repository in a new folder, as a git repository with
// one commit when git is installed.
func (r repo) write(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p, text := range r {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if haveGit() {
		git(t, dir, "init", "-q")
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", "original")
	}
	return dir
}

func gitEnv(home string) []string {
	env := []string{"HOME=" + home, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@t.invalid", "LC_ALL=C"}
	if p, ok := os.LookupEnv("PATH"); ok {
		env = append(env, "PATH="+p)
	}
	return env
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// runOutput is one run of the script.
type runOutput struct {
	stdout []byte
	stderr string
	err    error // non-nil when the script failed
}

// runMasker installs the script outside the repository, writes the request
// next to it and runs the script in dir.
func runMasker(t *testing.T, dir string, req mask.Request) runOutput {
	t.Helper()
	py := needPython(t)
	tools := t.TempDir()
	scriptPath := filepath.Join(tools, mask.ScriptName)
	if err := os.WriteFile(scriptPath, mask.Script(), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	reqPath := filepath.Join(tools, "request.json")
	if err := os.WriteFile(reqPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	argv := mask.Command(scriptPath, reqPath)
	cmd := exec.Command(py, argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"} // no PYTHON* variables from the host
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return runOutput{stdout.Bytes(), stderr.String(), err}
}

// mustMask runs the script and decodes its result, failing the test when
// the script fails.
func mustMask(t *testing.T, dir string, req mask.Request) *mask.Result {
	t.Helper()
	out := runMasker(t, dir, req)
	if out.err != nil {
		t.Fatalf("masker failed: %v\n%s", out.err, out.stderr)
	}
	res, err := mask.ParseResult(out.stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.stdout)
	}
	return res
}

func read(t *testing.T, dir, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkParses fails the test for any of the files that Python cannot parse.
func checkParses(t *testing.T, dir string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		cmd := exec.Command(needPython(t), "-c", "import ast, sys; ast.parse(open(sys.argv[1], 'rb').read(), sys.argv[1])", p)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not parse after masking: %v\n%s", p, err, out)
		}
	}
}

// goldRestores checks with git that the gold diff, masked -> original,
// applies to the masked tree and restores every original file exactly. It
// returns the gold diff ("" without git).
func goldRestores(t *testing.T, dir string) string {
	t.Helper()
	if !haveGit() {
		t.Log("git is not installed: the gold diff is not checked")
		return ""
	}
	gold := git(t, dir, "diff", "-R", "--no-color", "--no-ext-diff")
	masked := snapshot(t, dir)
	patch := filepath.Join(t.TempDir(), "gold.diff")
	if err := os.WriteFile(patch, []byte(gold), 0o644); err != nil {
		t.Fatal(err)
	}
	if gold != "" {
		git(t, dir, "apply", patch)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("the gold diff does not restore the original:\n%s", st)
	}
	// Leave the masked tree as it was, for later checks.
	for p, text := range masked {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return gold
}

// snapshot reads every regular file under dir except .git.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil && !errors.Is(err, filepath.SkipDir) {
		t.Fatal(err)
	}
	return out
}

// removedLines returns the lines of a diff that it removes ("-" lines,
// headers excluded).
func removedLines(diff string) []string {
	var out []string
	for l := range strings.SplitSeq(diff, "\n") {
		if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") {
			out = append(out, l)
		}
	}
	return out
}

// addedLines returns the lines a diff adds.
func addedLines(diff string) []string {
	var out []string
	for l := range strings.SplitSeq(diff, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			out = append(out, l)
		}
	}
	return out
}
