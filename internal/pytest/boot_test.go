package pytest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/pytest"
)

// TestBootRefusesChangedHarness: before root starts the runner, the boot
// script (given on the command line) checks the harness's folder. Each
// way the tests' user could have had a hand in it makes the run exit
// ExitHarnessChanged without running the runner, and Verify calls that
// tampering; the untouched folder runs the tests.
func TestBootRefusesChangedHarness(t *testing.T) {
	eng, base := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	opts := pytest.RunOptions{
		Root: "/work", File: "test_one.py", JUnitXML: "/tmp/j/one.xml", JSONL: "/fb/out/one.jsonl",
		PluginDir: "/fb/plugin", Runner: "/fb/" + pytest.RunnerFile, User: "65534:65534", CopyJUnitTo: "/fb/out/one.xml",
	}
	cases := []struct {
		name, tamper, want string // want: "" runs pytest
	}{
		{"untouched", "true", ""},
		{"the plugin's folder is the tests' user's", "chown 65534 /fb/plugin", "/fb/plugin is owned by uid 65534"},
		{"the harness's folder is writable by all", "chmod 0777 /fb", "/fb may be written by users other than root"},
		{"another plugin", "echo 'raise SystemExit(0)' >> /fb/plugin/featbench_pytest.py", "/fb/plugin/featbench_pytest.py does not have the harness's content"},
		{"another runner", "echo 'import os; os._exit(0)' > /fb/featbench_run.py", "/fb/featbench_run.py does not have the harness's content"},
		{"the runner is a link", "mv /fb/featbench_run.py /root/r.py && ln -s /root/r.py /fb/featbench_run.py", "/fb/featbench_run.py is a symbolic link"},
		{"a link in the output folder", "ln -s /etc/passwd /fb/out/one.xml", "/fb/out/one.xml is a symbolic link"},
		{"an output file of the tests' user", "touch /fb/out/x && chown 65534 /fb/out/x", "/fb/out/x is owned by uid 65534"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			box, err := eng.Start(ctx, container.Spec{Image: base, Name: "featbench-boot-test", WorkDir: "/work"})
			if err != nil {
				t.Fatal(err)
			}
			defer box.Remove()
			if err := box.CopyIn(ctx, "/fb", []container.File{
				{Path: pytest.RunnerFile, Data: pytest.RunnerSource()},
				{Path: "plugin/" + pytest.PluginFile, Data: pytest.PluginSource()},
				{Path: "out/.keep"},
			}); err != nil {
				t.Fatal(err)
			}
			if err := box.CopyIn(ctx, "/work", []container.File{{Path: "test_one.py", Data: []byte("def test_one():\n    assert 1 + 1 == 2\n")}}); err != nil {
				t.Fatal(err)
			}
			setup := "set -e; mkdir -p /tmp/j; chown 65534 /tmp/j; " + c.tamper
			if res, err := box.Exec(ctx, []string{"sh", "-c", setup}, container.ExecOptions{Timeout: time.Minute}); err != nil || res.ExitCode != 0 {
				t.Fatalf("setting up: %v %+v", err, res)
			}
			res, err := box.Exec(ctx, pytest.Command(opts), container.ExecOptions{Timeout: 2 * time.Minute, WorkDir: "/work", Env: pytest.Env(opts)})
			if err != nil {
				t.Fatal(err)
			}
			outs, err := box.CopyOut(ctx, "/fb/out", 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			in := pytest.Input{Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode, Expected: []string{"test_one.py::test_one"}}
			for _, o := range outs {
				switch o.Path {
				case "one.jsonl":
					in.JSONL = o.Data
				case "one.xml":
					in.JUnitXML = o.Data
				}
			}
			rep, err := pytest.Parse(in)
			if err != nil {
				t.Fatal(err)
			}
			integ := pytest.Verify(in, rep)
			if c.want == "" {
				if res.ExitCode != 0 || len(integ.Problems) > 0 || !integ.Trusted("test_one.py::test_one") {
					t.Fatalf("the untouched harness did not run the test: exit %d, problems %q\n%s\n%s", res.ExitCode, integ.Problems, res.Stdout, res.Stderr)
				}
				return
			}
			if res.ExitCode != pytest.ExitHarnessChanged || !strings.Contains(string(res.Stderr), c.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s\n%s", res.ExitCode, pytest.ExitHarnessChanged, c.want, res.Stdout, res.Stderr)
			}
			if strings.Contains(string(res.Stdout), "passed") {
				t.Errorf("the tests ran although the harness was changed:\n%s", res.Stdout)
			}
			if len(integ.Problems) == 0 || !strings.Contains(strings.Join(integ.Problems, "\n"), c.want) {
				t.Errorf("Verify's problems %q do not say %q", integ.Problems, c.want)
			}
		})
	}
}
