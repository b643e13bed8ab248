package site_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/synth"
	"github.com/featbench/featbench/site"
)

// keyedProject generates a small synthetic project and its build options.
func keyedProject(t *testing.T) site.Options {
	t.Helper()
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := synth.Generate(dir, synth.Config{RepoRoot: repo, Instances: 30, Submissions: 4, LiteSize: 10}); err != nil {
		t.Fatal(err)
	}
	opts, err := site.LoadOptions(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	opts.CacheDir = filepath.Join(repo, ".cache", "npm")
	opts.Now = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	return opts
}

func build(t *testing.T, opts site.Options) site.Report {
	t.Helper()
	rep, err := site.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// siteFiles reads every file of a built site.
func siteFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = raw
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sameSite fails unless two built sites hold the same files, byte for byte.
func sameSite(t *testing.T, got, want string) {
	t.Helper()
	g, w := siteFiles(t, got), siteFiles(t, want)
	var names []string
	for name := range w {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !bytes.Equal(g[name], w[name]) {
			t.Errorf("%s differs from a full build's", name)
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("%s is not in a full build", name)
		}
	}
}

// A rebuild renders again only the pages whose inputs changed, shows
// every edit, and gives exactly the site a full build of the same data
// gives: after one submission's result changed, an instance's statement,
// a submission's metadata, the configuration, and the program (every page
// rendered again). No page is left as an earlier build rendered it.
func TestRebuildRendersWhatChanged(t *testing.T) {
	opts := keyedProject(t)
	full := build(t, opts)
	if full.Kept != 0 || full.Written != full.Files {
		t.Fatalf("full build %+v: want every page rendered and written", full)
	}
	public := filepath.Join(opts.Root, "public")
	fresh := func(name string) string {
		o := opts
		o.Config.Output = name
		o.StateDir = filepath.Join(opts.Root, ".cache", "state-"+name)
		if rep := build(t, o); rep.Kept != 0 {
			t.Fatalf("a build into a new folder kept %d pages", rep.Kept)
		}
		return filepath.Join(opts.Root, name)
	}
	// rebuild builds after an edit and checks the result against a full
	// build, and that the pages show the edit.
	n := 0
	rebuild := func(what string, shows []byte, pages ...string) site.Report {
		t.Helper()
		rep := build(t, opts)
		t.Logf("after %s: %d of %d pages rendered", what, rep.Pages-rep.Kept, rep.Pages)
		for _, page := range pages {
			html, err := os.ReadFile(filepath.Join(public, filepath.FromSlash(page), "index.html"))
			if err != nil || !bytes.Contains(html, shows) {
				t.Errorf("after %s, %s does not show %q (%v)", what, page, shows, err)
			}
		}
		n++
		sameSite(t, public, fresh(fmt.Sprintf("public-full-%d", n)))
		return rep
	}
	dsPages := path.Join("datasets", synth.DatasetName, synth.DatasetVersion)

	// One result of one submission changes: its instance's page, its
	// system page and the pages of the whole split are rendered again.
	subs, _ := filepath.Glob(filepath.Join(opts.Root, "data", "submissions", "*", "*", "*", "*", "results.jsonl"))
	sort.Strings(subs)
	raw, err := os.ReadFile(subs[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	var r map[string]any
	for i, line := range lines {
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r["resolved"] == false {
			r["failure_modes"] = []string{"changed_by_the_test"}
			changed, _ := json.Marshal(r)
			lines[i] = string(changed) + "\n"
			break
		}
	}
	writeFile(t, subs[0], []byte(strings.Join(lines, "")))
	slug := strings.SplitN(filepath.Base(filepath.Dir(subs[0])), "_", 2)[1]
	rep := rebuild("one result changed", []byte("changed_by_the_test"),
		path.Join(dsPages, "instances", r["instance_id"].(string)), path.Join(dsPages, "systems", slug))
	if rep.Kept == 0 || rep.Pages-rep.Kept > 20 {
		t.Errorf("after one result changed: %d of %d pages rendered, want a few", rep.Pages-rep.Kept, rep.Pages)
	}

	// An instance's statement changes: its page is rendered again.
	ipath := filepath.Join(opts.Root, "data", "datasets", synth.DatasetName, synth.DatasetVersion, "instances.jsonl")
	raw, err = os.ReadFile(ipath)
	if err != nil {
		t.Fatal(err)
	}
	first := raw[:bytes.IndexByte(raw, '\n')]
	var in struct {
		ID string `json:"instance_id"`
	}
	if err := json.Unmarshal(first, &in); err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(raw, []byte("## Task"), []byte("## Task, edited by the test"), 1)
	if bytes.Equal(edited, raw) {
		t.Fatal("no statement to edit")
	}
	writeFile(t, ipath, edited)
	if rep := rebuild("one statement changed", []byte("Task, edited by the test"), path.Join(dsPages, "instances", in.ID)); rep.Kept == 0 {
		t.Error("after one statement changed every page was rendered")
	}

	// A submission's metadata changes: the system's name is shown on its
	// own page and on every instance page of its split.
	meta := filepath.Join(filepath.Dir(subs[0]), "metadata.toml")
	raw, err = os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	renamed := regexp.MustCompile(`(?m)^name = ".*"$`).ReplaceAll(raw, []byte(`name = "Renamed by the test"`))
	if bytes.Equal(renamed, raw) {
		t.Fatal("no name to change in metadata.toml")
	}
	writeFile(t, meta, renamed)
	rebuild("one system renamed", []byte("Renamed by the test"),
		path.Join(dsPages, "systems", slug), path.Join(dsPages, "instances", r["instance_id"].(string)), path.Join(dsPages, "instances", in.ID))

	// The configuration changes: every page shows the site's title.
	cfg := filepath.Join(opts.Root, "featbench.toml")
	raw, err = os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	retitled := regexp.MustCompile(`(?m)^title = ".*"$`).ReplaceAll(raw, []byte(`title = "Retitled by the test"`))
	writeFile(t, cfg, retitled)
	reloaded, err := site.LoadOptions(opts.Root, "")
	if err != nil {
		t.Fatal(err)
	}
	reloaded.CacheDir, reloaded.Now = opts.CacheDir, opts.Now
	opts = reloaded
	if rep := rebuild("the site retitled", []byte("Retitled by the test"), "", path.Join(dsPages, "instances", in.ID)); rep.Kept != 0 {
		t.Errorf("with the configuration changed, %d pages were kept", rep.Kept)
	}

	// Another program (here: another day shown in the footer, which is
	// part of the program's key as the executable's bytes are:
	// TestProgramKey) renders every page.
	opts.Now = opts.Now.AddDate(0, 0, 1)
	if rep := rebuild("the program changed", []byte(opts.Now.Format("2006-01-02")), "", path.Join(dsPages, "instances", in.ID)); rep.Kept != 0 {
		t.Errorf("with the program's key changed, %d pages were kept", rep.Kept)
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The same project given by another path (a relative --root, as `go run
// ./cmd/build` gives, and an absolute one) is the same input: nothing is
// built again, and after a change, unchanged pages are kept.
func TestRebuildFromAnotherPath(t *testing.T) {
	opts := keyedProject(t)
	build(t, opts)
	t.Chdir(filepath.Dir(opts.Root))
	rel, err := site.LoadOptions(filepath.Base(opts.Root), "")
	if err != nil {
		t.Fatal(err)
	}
	rel.CacheDir, rel.Now = opts.CacheDir, opts.Now
	if rep := build(t, rel); !rep.UpToDate {
		t.Errorf("the project by a relative path: %+v, want it up to date", rep)
	}
	subs, _ := filepath.Glob(filepath.Join(opts.Root, "data", "submissions", "*", "*", "*", "*", "results.jsonl"))
	raw, err := os.ReadFile(subs[0])
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, subs[0], raw[:bytes.LastIndexByte(raw[:len(raw)-1], '\n')+1])
	if rep := build(t, rel); rep.Kept == 0 {
		t.Errorf("after one result changed, by a relative path: %+v, want unchanged pages kept", rep)
	}
}

// PauseGCWhileLoading changes nothing a build writes, and gives the
// process its collector settings back, whether the build succeeds or
// its data is refused.
func TestPauseGCWhileLoadingRestoresTheSettings(t *testing.T) {
	const percent, limit = 137, 3 << 30
	prevPercent, prevLimit := debug.SetGCPercent(percent), debug.SetMemoryLimit(limit)
	t.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })
	check := func(when string) {
		t.Helper()
		p, l := debug.SetGCPercent(percent), debug.SetMemoryLimit(-1)
		if p != percent || l != limit {
			t.Fatalf("%s: GC percent %d and memory limit %d, want %d and %d as before the build", when, p, l, percent, limit)
		}
	}
	plain := keyedProject(t)
	build(t, plain)
	paused := keyedProject(t)
	paused.PauseGCWhileLoading = true
	build(t, paused)
	check("after a build")
	a, b := siteFiles(t, plain.Root+"/public"), siteFiles(t, paused.Root+"/public")
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("%d files built without the pause, %d with it", len(a), len(b))
	}
	for rel, raw := range a {
		if !bytes.Equal(raw, b[rel]) {
			t.Errorf("%s differs with the pause", rel)
		}
	}
	// Refused data: the build fails after loading.
	results, err := filepath.Glob(filepath.Join(paused.Root, "data", "submissions", "*", "*", "*", "*", "results.jsonl"))
	if err != nil || len(results) == 0 {
		t.Fatalf("no results.jsonl to break (%v)", err)
	}
	if err := os.WriteFile(results[0], []byte("{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := site.Build(context.Background(), paused); err == nil {
		t.Fatal("a build of a broken results.jsonl succeeded")
	}
	check("after a refused build")
}
