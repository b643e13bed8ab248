package container_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images/imagestest"
)

// testLabel marks the containers of this test binary.
var testLabel = map[string]string{"featbench.test": "container-" + fmt.Sprint(os.Getpid())}

func TestConnectUnreachable(t *testing.T) {
	const host = "unix:///nonexistent/featbench-test.sock"
	_, err := container.Connect(context.Background(), host)
	if err == nil {
		t.Fatal("Connect to a missing socket succeeded")
	}
	for _, want := range []string{"cannot reach the Docker engine at " + host, "scripts/provision-docker.sh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// start starts a container from the base image, removed when the test ends.
func start(t *testing.T, limits container.Limits) (*container.Engine, *container.Container) {
	t.Helper()
	eng, base := imagestest.Base(t)
	c, err := eng.Start(context.Background(), container.Spec{
		Image: base, Name: "featbench-test-" + t.Name(), Labels: testLabel, WorkDir: "/testbed", Limits: limits,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Remove(); err != nil {
			t.Error(err)
		}
	})
	return eng, c
}

// sh runs a bash script and fails the test unless it exits with 0.
func sh(t *testing.T, c *container.Container, script string) string {
	t.Helper()
	res, err := c.Exec(context.Background(), []string{"bash", "-c", script}, container.ExecOptions{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

// processes lists the command lines running in c.
func processes(t *testing.T, c *container.Container) string {
	t.Helper()
	return sh(t, c, `for d in /proc/[0-9]*; do [ "${d#/proc/}" = $$ ] || { tr '\0' ' ' <"$d/cmdline"; echo; }; done 2>/dev/null`)
}

func TestPythonAndPytest(t *testing.T) {
	_, c := start(t, container.Limits{})
	err := c.CopyIn(context.Background(), "/testbed", []container.File{{Path: "tests/test_x.py", Data: []byte(
		"import pytest\n\ndef test_ok():\n    assert 1 + 1 == 2\n\n@pytest.mark.parametrize('v', ['a b - c', 'd::e'])\ndef test_p(v):\n    assert v\n")}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Exec(context.Background(), []string{"python3", "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests/test_x.py"},
		container.ExecOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "PASSED tests/test_x.py::test_p[a b - c]") {
		t.Errorf("pytest: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// TestToolsWorkWithDroppedCaps checks that what tasks do as root still
// works with the capabilities Start drops.
func TestToolsWorkWithDroppedCaps(t *testing.T) {
	_, c := start(t, container.Limits{})
	var files []container.File
	src := filepath.Join("..", "..", "examples", "textkit")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, "__pycache__") {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(src, p)
		files = append(files, container.File{Path: filepath.ToSlash(rel), Data: data})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CopyIn(context.Background(), "/testbed", files); err != nil {
		t.Fatal(err)
	}
	out := sh(t, c, `set -e
git init -q && git add -A && git commit -q -m base && echo '# x' >> README.md && git commit -qam edit && git reset -q --hard HEAD~1
git diff --quiet && git clean -fdxq && echo git-ok
pip install --no-index --no-deps --no-build-isolation . >/tmp/pip.log 2>&1 || { cat /tmp/pip.log; exit 1; }
cd / && python3 -c 'import textkit' && cd /testbed && echo pip-ok
python3 -m pytest -q -p no:cacheprovider | tail -1
touch /tmp/f && chown 1000:1000 /tmp/f && chmod 000 /tmp/f && cat /tmp/f && rm /tmp/f && echo files-ok
mkdir -p /tmp/t && tar -C /testbed -cf /tmp/a.tar . && tar -C /tmp/t -xf /tmp/a.tar && echo tar-ok
grep Cap /proc/self/status`)
	for _, want := range []string{"git-ok", "pip-ok", " passed", "files-ok", "tar-ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	t.Logf("capabilities:\n%s", out[strings.Index(out, "CapInh"):])
}

func TestNetworkIsNone(t *testing.T) {
	_, c := start(t, container.Limits{})
	if got := strings.Fields(sh(t, c, "ls /sys/class/net")); !slices.Equal(got, []string{"lo"}) {
		t.Errorf("network interfaces %v, want only lo", got)
	}
	info, err := container.Inspect(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if info.HostConfig.NetworkMode != "none" || !info.Config.NetworkDisabled {
		t.Errorf("network mode %q, disabled %v", info.HostConfig.NetworkMode, info.Config.NetworkDisabled)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	const mem, pids = 256 << 20, 64
	_, c := start(t, container.Limits{Memory: mem, NanoCPUs: 1e9, Pids: pids})
	info, err := container.Inspect(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	h := info.HostConfig
	if h.Memory != mem || h.MemorySwap != mem || h.NanoCPUs != 1e9 || h.PidsLimit == nil || *h.PidsLimit != pids {
		t.Errorf("resources: memory %d swap %d cpus %d pids %v", h.Memory, h.MemorySwap, h.NanoCPUs, h.PidsLimit)
	}
	if h.Init == nil || !*h.Init || !slices.Contains(h.SecurityOpt, "no-new-privileges") || !slices.Equal(h.CapDrop, []string{"ALL"}) {
		t.Errorf("init %v, security %v, cap drop %v", h.Init, h.SecurityOpt, h.CapDrop)
	}
	if !strings.Contains(processes(t, c), "docker-init") {
		t.Error("no init process")
	}

	// Memory: allocating twice the limit gets the process killed, which is
	// not a timeout.
	res, err := c.Exec(context.Background(), []string{"python3", "-c", "b = bytearray(512 << 20); b[::4096] = b'x' * len(b[::4096])"},
		container.ExecOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 137 || res.TimedOut {
		t.Errorf("allocating 512 MiB under a 256 MiB limit: exit %d, timed out %v, %s", res.ExitCode, res.TimedOut, res.Stderr)
	}

	// Processes: a fork bomb hits the pids limit and is stopped by the
	// timeout; the container survives it.
	start := time.Now()
	res, err = c.Exec(context.Background(), []string{"bash", "-c", `bomb() { bomb | bomb & }; bomb; sleep 30`},
		container.ExecOptions{Timeout: 3 * time.Second})
	t.Logf("fork bomb: %s, exit %d, timed out %v, err %v", time.Since(start).Round(time.Millisecond), res.ExitCode, res.TimedOut, err)
	if errors.Is(err, container.ErrContainerKilled) {
		t.Log("the fork bomb was stopped by killing the container")
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Errorf("fork bomb not reported as timed out: exit %d", res.ExitCode)
	}
	if n := strings.Count(processes(t, c), "bash -c bomb"); n > 0 {
		t.Errorf("%d processes of the fork bomb left", n)
	}
	// Counting processes shows the limit: no more than pids at once.
	out := sh(t, c, `python3 - <<'EOF'
import os, time
n = 0
try:
    for _ in range(200):
        if os.fork() == 0:
            time.sleep(30); os._exit(0)
        n += 1
except OSError as e:
    print("fork failed after", n, e.strerror)
EOF`)
	if !strings.Contains(out, "fork failed after") {
		t.Errorf("200 forks under a %d pids limit: %s", pids, out)
	}
}

func TestExecTimeout(t *testing.T) {
	ctx := context.Background()
	t.Run("sleep", func(t *testing.T) {
		t.Parallel()
		_, c := start(t, container.Limits{})
		res, err := c.Exec(ctx, []string{"sleep", "100"}, container.ExecOptions{Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || res.ExitCode != 124 || res.Duration < 2*time.Second || res.Duration > 4*time.Second {
			t.Errorf("sleep 100 with a 2 s timeout: timed out %v, exit %d, after %s", res.TimedOut, res.ExitCode, res.Duration)
		}
		// An exit status of 124 before the timeout is the command's own.
		res, err = c.Exec(ctx, []string{"bash", "-c", "exit 124"}, container.ExecOptions{Timeout: time.Minute})
		if err != nil || res.TimedOut || res.ExitCode != 124 {
			t.Errorf("exit 124: %+v, %v", res, err)
		}
	})
	t.Run("ignores SIGTERM", func(t *testing.T) {
		// A command ignoring SIGTERM gets SIGKILL 5 s later; one that left
		// the process group (setsid) is killed too.
		t.Parallel()
		_, c := start(t, container.Limits{})
		res, err := c.Exec(ctx, []string{"bash", "-c", `setsid sleep 103 & trap "" TERM; python3 -c 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(100)'`},
			container.ExecOptions{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || res.ExitCode != 137 || res.Duration > 15*time.Second {
			t.Errorf("ignoring SIGTERM: timed out %v, exit %d, after %s", res.TimedOut, res.ExitCode, res.Duration)
		}
		if ps := processes(t, c); strings.Contains(ps, "sleep 10") || strings.Contains(ps, "python3") {
			t.Errorf("processes left after a timeout:\n%s", ps)
		}
	})
	t.Run("host deadline", func(t *testing.T) {
		// When coreutils timeout cannot act (here it is stopped), the host
		// deadline kills the command.
		t.Parallel()
		_, c := start(t, container.Limits{})
		res, err := c.Exec(ctx, []string{"bash", "-c", "kill -STOP $PPID; sleep 100"}, container.ExecOptions{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || res.Duration > 20*time.Second {
			t.Errorf("stopped timeout: timed out %v, exit %d, after %s", res.TimedOut, res.ExitCode, res.Duration)
		}
		if ps := processes(t, c); strings.Contains(ps, "sleep 100") || strings.Contains(ps, " 1.000s ") {
			t.Errorf("processes left after the host deadline:\n%s", ps)
		}
		t.Logf("host deadline after a 1 s timeout: %s, exit %d", res.Duration.Round(time.Millisecond), res.ExitCode)
	})
}

func TestExecCancel(t *testing.T) {
	eng, c := start(t, container.Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	begin := time.Now()
	_, err := c.Exec(ctx, []string{"bash", "-c", "sleep 101 & sleep 102"}, container.ExecOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exec with a cancelled context: %v", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("Exec returned %s after its context ended", d)
	}
	if ps := processes(t, c); strings.Contains(ps, "sleep 10") {
		t.Errorf("processes left after cancellation:\n%s", ps)
	}

	// Remove works with the caller's context gone, and twice.
	begin = time.Now()
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	t.Logf("remove: %s", time.Since(begin).Round(time.Millisecond))
	if err := c.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	list, err := eng.Containers(context.Background(), testLabel)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range list {
		if info.ID == c.ID {
			t.Errorf("container %s still there after Remove: %+v", c.Name, info)
		}
	}
}

func TestExecIO(t *testing.T) {
	_, c := start(t, container.Limits{})
	ctx := context.Background()
	res, err := c.Exec(ctx, []string{"bash", "-c", `cat; echo "$FOO" >&2; pwd; exit 3`},
		container.ExecOptions{Stdin: strings.NewReader("from stdin\n"), Env: []string{"FOO=bar"}, WorkDir: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Stdout) != "from stdin\n/tmp\n" || string(res.Stderr) != "bar\n" || res.ExitCode != 3 || res.Truncated {
		t.Errorf("got stdout %q stderr %q exit %d truncated %v", res.Stdout, res.Stderr, res.ExitCode, res.Truncated)
	}

	res, err = c.Exec(ctx, []string{"python3", "-c", "import sys; sys.stdout.write('a' * 5_000_000 + 'THE END\\n')"},
		container.ExecOptions{MaxOutput: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	if !res.Truncated || !strings.HasPrefix(out, "[featbench: the first 4999008 bytes of this output were cut]\n") ||
		!strings.HasSuffix(out, "aaaTHE END\n") || len(out) > 1100 {
		t.Errorf("capped output: truncated %v, %d bytes, starts %q", res.Truncated, len(out), out[:min(len(out), 80)])
	}

	if _, err := c.Exec(ctx, []string{"no-such-command"}, container.ExecOptions{}); err == nil {
		// The engine reports a missing executable either as an error or as
		// exit status 126/127; both are fine, a success is not.
		res, _ := c.Exec(ctx, []string{"no-such-command"}, container.ExecOptions{})
		if res.ExitCode == 0 {
			t.Error("a missing command succeeded")
		}
	}
}

func TestCopy(t *testing.T) {
	_, c := start(t, container.Limits{})
	ctx := context.Background()
	in := []container.File{
		{Path: "a.txt", Data: []byte("alpha\n")},
		{Path: "sub/dir/run.sh", Mode: 0o755, Data: []byte("#!/bin/sh\necho run\n")},
		{Path: "empty", Data: nil},
		{Path: "link", Link: "a.txt"},
	}
	if err := c.CopyIn(ctx, "/fb/in", in); err != nil { // /fb does not exist yet
		t.Fatal(err)
	}
	if out := sh(t, c, "/fb/in/sub/dir/run.sh && cat /fb/in/link && stat -c '%a %U' /fb/in/a.txt"); out != "run\nalpha\n644 root\n" {
		t.Errorf("in the container: %q", out)
	}
	out, err := c.CopyOut(ctx, "/fb/in", 0)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b container.File) int { return strings.Compare(a.Path, b.Path) })
	var got []string
	for _, f := range out {
		got = append(got, fmt.Sprintf("%s %o %q", f.Path, f.Mode, f.Data))
	}
	want := []string{`a.txt 644 "alpha\n"`, `empty 644 ""`, `sub/dir/run.sh 755 "#!/bin/sh\necho run\n"`}
	if !slices.Equal(got, want) {
		t.Errorf("CopyOut = %q, want %q (links left out)", got, want)
	}

	one, err := c.CopyOut(ctx, "/fb/in/a.txt", 0)
	if err != nil || len(one) != 1 || one[0].Path != "a.txt" || string(one[0].Data) != "alpha\n" {
		t.Errorf("CopyOut of a file: %+v, %v", one, err)
	}
	if _, err := c.CopyOut(ctx, "/fb/missing", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CopyOut of a missing path: %v, want fs.ErrNotExist", err)
	}
	if _, err := c.CopyOut(ctx, "/fb/in", 10); err == nil || !strings.Contains(err.Error(), "more than 10 bytes") {
		t.Errorf("CopyOut over its cap: %v", err)
	}
	for _, p := range []string{"../escape", "/abs", "a/../../b", ""} {
		if err := c.CopyIn(ctx, "/fb/in", []container.File{{Path: p, Data: []byte("x")}}); err == nil {
			t.Errorf("CopyIn accepted the path %q", p)
		}
	}
	if out := sh(t, c, "ls /fb /"); strings.Contains(out, "escape") || strings.Contains(out, "abs") {
		t.Errorf("an escaping path was written:\n%s", out)
	}
}

func TestUntarRefusesEscapes(t *testing.T) {
	for _, name := range []string{"../evil", "out/../../evil", "/etc/passwd", "other/x"} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		tw.WriteHeader(&tar.Header{Name: "out/", Typeflag: tar.TypeDir, Mode: 0o755})
		tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: 1})
		tw.Write([]byte("x"))
		tw.Close()
		if files, err := container.Untar(&buf, "out", 1<<20); err == nil {
			t.Errorf("entry %q accepted: %+v", name, files)
		}
	}
}

func TestRemoveContainers(t *testing.T) {
	eng, base := imagestest.Base(t)
	ctx := context.Background()
	run := map[string]string{"featbench.test": "leftovers-" + fmt.Sprint(time.Now().UnixNano())}
	var ids []string
	for _, owner := range []string{"alive", "dead", "dead"} {
		labels := map[string]string{"featbench.owner": owner}
		for k, v := range run {
			labels[k] = v
		}
		c, err := eng.Start(ctx, container.Spec{Image: base, Name: "featbench-test-leftover", Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
		t.Cleanup(func() { c.Remove() })
	}
	list, err := eng.Containers(ctx, run)
	if err != nil || len(list) != 3 {
		t.Fatalf("Containers by label: %d, %v", len(list), err)
	}
	if list[0].State != "running" || !strings.HasPrefix(list[0].Name, "featbench-test-leftover-") {
		t.Errorf("listed %+v", list[0])
	}
	n, err := eng.RemoveContainers(ctx, run, func(l map[string]string) bool { return l["featbench.owner"] == "alive" })
	if err != nil || n != 2 {
		t.Fatalf("RemoveContainers = %d, %v; want 2", n, err)
	}
	list, _ = eng.Containers(ctx, run)
	if len(list) != 1 || list[0].ID != ids[0] {
		t.Errorf("left %+v, want the alive owner's", list)
	}
	if _, err := eng.RemoveContainers(ctx, nil, nil); err == nil {
		t.Error("RemoveContainers without a filter was accepted")
	}
}

func TestBuildAndImport(t *testing.T) {
	eng, base := imagestest.Base(t)
	ctx := context.Background()
	tag := fmt.Sprintf("featbench/test-build:%d", time.Now().UnixNano())
	t.Cleanup(func() { eng.RemoveImage(context.Background(), tag) })

	// A failing RUN is an error with the command and its output.
	err := eng.Build(ctx, tag, "FROM "+base+"\nCOPY f /f\nRUN cat /f && echo to-stderr >&2 && exit 7\n",
		[]container.File{{Path: "f", Data: []byte("content-of-f\n")}}, nil, nil)
	if err == nil {
		t.Fatal("a failing RUN built an image")
	}
	for _, want := range []string{"cat /f && echo to-stderr", "non-zero code: 7", "content-of-f", "to-stderr"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("build error has no %q:\n%v", want, err)
		}
	}
	if ok, _ := eng.ImageExists(ctx, tag); ok {
		t.Error("the failed build left its tag")
	}
	// A missing base is an error too (and no pull is tried).
	if err := eng.Build(ctx, tag, "FROM featbench/no-such-image:0\n", nil, nil, nil); err == nil {
		t.Error("a build from a missing image succeeded")
	}

	var log bytes.Buffer
	labels := map[string]string{"featbench.test": "build", "with space": `quo"te`}
	if err := eng.Build(ctx, tag, "FROM "+base+"\nRUN echo built > /built\n", nil, labels, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "Successfully tagged "+tag) {
		t.Errorf("build log:\n%s", log.String())
	}
	list, err := eng.Images(ctx, map[string]string{"featbench.test": "build"})
	if err != nil || !slices.ContainsFunc(list, func(i container.Image) bool { return i.Ref == tag && i.Labels["with space"] == `quo"te` }) {
		t.Errorf("Images by label: %+v, %v", list, err)
	}

	// Import a small root file system; a failure inside the stream (a bad
	// change) is an error.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "etc"), 0o755)
	os.WriteFile(filepath.Join(dir, "etc", "hello"), []byte("hi\n"), 0o600)
	os.Symlink("hello", filepath.Join(dir, "etc", "link"))
	os.Chown(filepath.Join(dir, "etc", "hello"), 1234, 5678)
	imported := tag + "-imported"
	t.Cleanup(func() { eng.RemoveImage(context.Background(), imported) })
	if err := eng.ImportRootfs(ctx, dir, imported, map[string]string{"featbench.test": "import"}, []string{"ENV A=b"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := eng.ImageExists(ctx, imported); !ok || err != nil {
		t.Errorf("imported image missing: %v", err)
	}
	err = eng.ImportRootfs(ctx, dir, tag+"-bad", nil, []string{"FROBNICATE x"})
	if err == nil {
		t.Error("an import with a bad change succeeded")
	}
	t.Logf("import error: %v", err)
	if err := eng.RemoveImage(ctx, imported); err != nil {
		t.Error(err)
	}
	if err := eng.RemoveImage(ctx, imported); err != nil {
		t.Errorf("removing a removed image: %v", err)
	}
}

func TestReadStreamError(t *testing.T) {
	stream := `{"status":"Downloading"}
{"stream":"Step 1/2 : RUN false\n"}
{"errorDetail":{"code":1,"message":"The command '/bin/sh -c false' returned a non-zero code: 1"},"error":"The command '/bin/sh -c false' returned a non-zero code: 1"}
`
	var log bytes.Buffer
	out, err := container.ReadStream(strings.NewReader(stream), &log)
	if err == nil || err.Error() != "The command '/bin/sh -c false' returned a non-zero code: 1" {
		t.Errorf("error %v", err)
	}
	if string(out) != "Downloading\nStep 1/2 : RUN false\n" || log.String() != string(out) {
		t.Errorf("text %q, log %q", out, log.String())
	}
	if _, err := container.ReadStream(strings.NewReader(`{"stream":"x"`), nil); err == nil {
		t.Error("a cut stream is not an error")
	}
}
