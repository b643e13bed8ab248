package pyinstall_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/pyinstall"
)

// pkg is a package a level 2 prediction could ship, and whether the fast
// installer is expected to install it itself (fast) or leave it to pip.
type pkg struct {
	name  string
	fast  bool
	files map[string]string
}

const initPy = "def hello():\n    return 'hi'\n"

// corpus covers the layouts agents write, and the cases the fast path
// must leave to pip: what pip fails on, and what pip installs in ways the
// fast path does not (generated scripts, .data folders).
var corpus = []pkg{
	{"pyproject-flat", true, map[string]string{
		"pyproject.toml":         "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"agent_code\"\nversion = \"0.1.0\"\nrequires-python = \">=3.9\"\n\n[tool.setuptools]\npackages = [\"agent_code\"]\n",
		"agent_code/__init__.py": initPy, "agent_code/sub/__init__.py": "", "agent_code/sub/mod.py": "X = 1\n",
	}},
	{"pyproject-discovery", true, map[string]string{
		"pyproject.toml":         "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"agent-code\"\nversion = \"1.0\"\n",
		"agent_code/__init__.py": initPy, "README.md": "readme\n",
	}},
	{"src-layout-package-data", true, map[string]string{
		"pyproject.toml":             "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"agent_code\"\nversion = \"2.0.0\"\n\n[tool.setuptools.packages.find]\nwhere = [\"src\"]\n\n[tool.setuptools.package-data]\nagent_code = [\"*.txt\"]\n",
		"src/agent_code/__init__.py": initPy, "src/agent_code/words.txt": "a\nb\n",
	}},
	{"py-modules", true, map[string]string{
		"pyproject.toml": "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"agent_code\"\nversion = \"0.0.1\"\n\n[tool.setuptools]\npy-modules = [\"agent_code\"]\n",
		"agent_code.py":  initPy,
	}},
	{"setup-cfg", true, map[string]string{
		"pyproject.toml":         "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n",
		"setup.cfg":              "[metadata]\nname = agent_code\nversion = 0.3\n\n[options]\npackages = agent_code\n",
		"agent_code/__init__.py": initPy,
	}},
	{"setup-py-only", true, map[string]string{
		"setup.py":               "from setuptools import setup\nsetup(name='agent_code', version='0.1', packages=['agent_code'])\n",
		"agent_code/__init__.py": initPy,
	}},
	{"no-build-system", true, map[string]string{
		"pyproject.toml":         "[project]\nname = \"agent_code\"\nversion = \"0.1\"\n",
		"agent_code/__init__.py": initPy,
	}},
	{"build-system-without-backend", true, map[string]string{
		"pyproject.toml":         "[build-system]\nrequires = [\"setuptools\"]\n",
		"setup.py":               "from setuptools import setup\nsetup(name='agent_code', version='0.2', packages=['agent_code'])\n",
		"agent_code/__init__.py": initPy,
	}},
	{"build-system-without-requires", false, map[string]string{
		"pyproject.toml":         "[build-system]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"agent_code\"\nversion = \"0.1\"\n",
		"agent_code/__init__.py": initPy,
	}},
	{"bad-toml", false, map[string]string{
		"pyproject.toml":         "[build-system\nrequires = \n",
		"agent_code/__init__.py": initPy,
	}},
	{"setup-raises", false, map[string]string{
		"pyproject.toml":         "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n",
		"setup.py":               "raise RuntimeError('the agent broke its build')\n",
		"agent_code/__init__.py": initPy,
	}},
	{"setup-exits", false, map[string]string{
		"setup.py":               "import sys\nsys.exit(1)\n",
		"agent_code/__init__.py": initPy,
	}},
	{"requires-python-4", false, map[string]string{
		"pyproject.toml":         "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"agent_code\"\nversion = \"0.1\"\nrequires-python = \">=4\"\n",
		"agent_code/__init__.py": initPy,
	}},
	{"console-script", false, map[string]string{
		"pyproject.toml":         "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"agent_code\"\nversion = \"0.1\"\n\n[project.scripts]\nagent-code = \"agent_code:hello\"\n",
		"agent_code/__init__.py": initPy,
	}},
	{"data-files", false, map[string]string{
		"setup.py":               "from setuptools import setup\nsetup(name='agent_code', version='0.1', packages=['agent_code'], data_files=[('share/agent', ['data.txt'])])\n",
		"data.txt":               "x\n",
		"agent_code/__init__.py": initPy,
	}},
	{"unknown-backend", false, map[string]string{
		"pyproject.toml":         "[build-system]\nrequires = [\"flit_core\"]\nbuild-backend = \"flit_core.buildapi\"\n\n[project]\nname = \"agent_code\"\nversion = \"0.1\"\ndescription = \"x\"\n",
		"agent_code/__init__.py": initPy,
	}},
	{"backend-path", false, map[string]string{
		"pyproject.toml":         "[build-system]\nrequires = []\nbuild-backend = \"mybackend\"\nbackend-path = [\"_build\"]\n",
		"_build/mybackend.py":    "from setuptools.build_meta import *\n",
		"setup.py":               "from setuptools import setup\nsetup(name='agent_code', version='0.1', packages=['agent_code'])\n",
		"agent_code/__init__.py": initPy,
	}},
}

// driver installs every package of the corpus (under /src/<which>/<name>)
// both ways as the tests' user, and prints one JSON line per package: each
// way's exit status and the files it installed, with their contents'
// digests, less what only pip writes.
const driver = `
import hashlib, json, os, subprocess, sys
pip_only = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}
def tree(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            rel = os.path.relpath(p, root)
            if rel.split(os.sep)[0].endswith(".dist-info") and f in pip_only:
                continue
            if "__pycache__" in rel.split(os.sep):
                continue
            with open(p, "rb") as fh:
                out[rel] = hashlib.sha256(fh.read()).hexdigest()[:16] + ("x" if os.access(p, os.X_OK) else "")
    return out
def run(argv):
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "HOME=/tmp"] + argv, capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr)[-1500:]
for name in sys.argv[1:]:
    res = {"name": name}
    for way in ("pip", "fast", "argv"):
        src, target = f"/src/{way}/{name}", f"/tmp/{way}/{name}"
        os.makedirs(target); os.chown(target, 65534, 65534)
        if way == "pip":
            argv = PIP
        elif way == "fast":
            argv = ["python3", "-I", "/fb/featbench_install.py", src, target]
        else:
            argv = ARGV
        argv = [a.replace("SRC", src).replace("TARGET", target) for a in argv]
        code, out = run(argv)
        res[way] = {"code": code, "out": out, "tree": tree(target)}
    print(json.dumps(res), flush=True)
`

type way struct {
	Code int               `json:"code"`
	Out  string            `json:"out"`
	Tree map[string]string `json:"tree"`
}

type result struct {
	Name            string
	Pip, Fast, Argv way
}

// TestFastInstallIsPips installs each package of the corpus with pip, with
// the fast installer alone, and with Argv, in the base images of both
// Pythons, as the tests' user: whenever the fast installer installs, pip
// installs the same files; whenever pip's verdict differs, the fast
// installer has declined; Argv's result is always pip's. And it does take
// the fast path where it is meant to (else it would gain nothing).
func TestFastInstallIsPips(t *testing.T) {
	for _, python := range []string{"3.11", "3.13"} {
		t.Run(python, func(t *testing.T) {
			eng, base := imagestest.BaseFor(t, python)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			box, err := eng.Start(ctx, container.Spec{Image: base, Name: "featbench-pyinstall-test", Limits: container.Limits{Memory: 1 << 30, NanoCPUs: 1e9, Pids: 512, Tmp: 256 << 20}})
			if err != nil {
				t.Fatal(err)
			}
			defer box.Remove()
			files := []container.File{{Path: "fb/" + pyinstall.File, Data: pyinstall.Source()}}
			var names []string
			for _, p := range corpus {
				names = append(names, p.name)
				for _, which := range []string{"pip", "fast", "argv"} {
					for path, data := range p.files {
						files = append(files, container.File{Path: "src/" + which + "/" + p.name + "/" + path, Data: []byte(data)})
					}
				}
			}
			pip, _ := json.Marshal(pyinstall.PipArgs("SRC", "TARGET"))
			argv, _ := json.Marshal(pyinstall.Argv("/fb/"+pyinstall.File, "SRC", "TARGET"))
			script := "PIP = " + string(pip) + "\nARGV = " + string(argv) + "\n" + driver
			files = append(files, container.File{Path: "fb/driver.py", Data: []byte(script)})
			if err := box.CopyIn(ctx, "/", files); err != nil {
				t.Fatal(err)
			}
			if res, err := box.Exec(ctx, []string{"chown", "-R", "65534:65534", "/src"}, container.ExecOptions{}); err != nil || res.ExitCode != 0 {
				t.Fatalf("chown: %v %s", err, res.Stderr)
			}
			res, err := box.Exec(ctx, append([]string{"python3", "-I", "/fb/driver.py"}, names...), container.ExecOptions{Timeout: 8 * time.Minute})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("driver: %v, exit %d: %s", err, res.ExitCode, res.Stderr)
			}
			lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
			if len(lines) != len(corpus) {
				t.Fatalf("%d results for %d packages:\n%s", len(lines), len(corpus), res.Stdout)
			}
			for i, line := range lines {
				var r result
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				p := corpus[i]
				t.Logf("%-24s fast exit %d (%d files), pip exit %d (%d files): %s", p.name, r.Fast.Code, len(r.Fast.Tree), r.Pip.Code, len(r.Pip.Tree), lastLine(r.Fast.Out))
				if r.Fast.Code == 0 {
					if r.Pip.Code != 0 {
						t.Errorf("%s: the fast installer installed what pip refuses (exit %d):\n%s", p.name, r.Pip.Code, r.Pip.Out)
					}
					if !maps.Equal(r.Pip.Tree, r.Fast.Tree) || len(r.Fast.Tree) == 0 {
						t.Errorf("%s: the fast installer's files differ from pip's:\npip:  %v\nfast: %v", p.name, keys(r.Pip.Tree), keys(r.Fast.Tree))
					}
				} else {
					if r.Fast.Code != 3 {
						t.Errorf("%s: the fast installer exited %d, not 0 or 3:\n%s", p.name, r.Fast.Code, r.Fast.Out)
					}
					if len(r.Fast.Tree) != 0 {
						t.Errorf("%s: the fast installer declined but left files: %v", p.name, keys(r.Fast.Tree))
					}
				}
				if (r.Fast.Code == 0) != p.fast {
					t.Errorf("%s: fast path taken = %v, want %v:\n%s", p.name, r.Fast.Code == 0, p.fast, r.Fast.Out)
				}
				if (r.Argv.Code == 0) != (r.Pip.Code == 0) || !maps.Equal(r.Pip.Tree, r.Argv.Tree) {
					t.Errorf("%s: Argv gave exit %d and %v, pip exit %d and %v:\n%s", p.name, r.Argv.Code, keys(r.Argv.Tree), r.Pip.Code, keys(r.Pip.Tree), r.Argv.Out)
				}
			}
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// BenchmarkInstall installs the corpus's flat pyproject package as the
// tests' user into an emptied target, with the fast installer and, its
// peer in the same run, pip as the statement announces it: each op is one
// install, through one docker exec, in the default Python's base image.
//
//	go test -run '^$' -bench Install -benchtime 20x ./internal/pyinstall
func BenchmarkInstall(b *testing.B) {
	eng, base := imagestest.Base(b)
	ctx := context.Background()
	box, err := eng.Start(ctx, container.Spec{Image: base, Name: "featbench-pyinstall-bench", Limits: container.Limits{Memory: 1 << 30, NanoCPUs: 1e9, Pids: 512, Tmp: 256 << 20}})
	if err != nil {
		b.Fatal(err)
	}
	defer box.Remove()
	files := []container.File{{Path: "fb/" + pyinstall.File, Data: pyinstall.Source()}}
	for path, data := range corpus[0].files {
		files = append(files, container.File{Path: "src/pkg/" + path, Data: []byte(data)})
	}
	if err := box.CopyIn(ctx, "/", files); err != nil {
		b.Fatal(err)
	}
	if res, err := box.Exec(ctx, []string{"chown", "-R", "65534:65534", "/src"}, container.ExecOptions{}); err != nil || res.ExitCode != 0 {
		b.Fatalf("chown: %v %s", err, res.Stderr)
	}
	asNobody := []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "HOME=/tmp"}
	for _, c := range []struct {
		name string
		argv []string
	}{
		{"fast", []string{"python3", "-I", "/fb/" + pyinstall.File, "/src/pkg", "/tmp/target"}},
		{"pip", pyinstall.PipArgs("/src/pkg", "/tmp/target")},
	} {
		b.Run(c.name, func(b *testing.B) {
			script := "rm -rf /tmp/target && mkdir /tmp/target && exec \"$@\""
			argv := append(append(asNobody, "sh", "-c", script, "sh"), c.argv...)
			for i := 0; i < b.N; i++ {
				res, err := box.Exec(ctx, argv, container.ExecOptions{})
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%s: %v, exit %d: %s", c.name, err, res.ExitCode, res.Stdout)
				}
			}
		})
	}
}
