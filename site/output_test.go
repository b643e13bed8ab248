package site_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/featbench/featbench/site"
)

// snapshot is every file and folder under dir (symlinks as their target),
// by slash-separated path: "d" for a folder, the content for a file.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			m[rel] = "d"
		case d.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			m[rel] = "-> " + target
		default:
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			m[rel] = string(raw)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameTree reports the differences between two snapshots.
func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, "missing "+k)
		} else if g != v {
			diffs = append(diffs, "changed "+k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, "extra "+k)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		if len(diffs) > 10 {
			diffs = append(diffs[:10], "...")
		}
		t.Errorf("%s: %d differences:\n  %s", what, len(diffs), strings.Join(diffs, "\n  "))
	}
}

// projectEntries lists the project root: after any build it must hold the
// output folder and nothing a build left behind.
func projectEntries(t *testing.T, root string) []string {
	t.Helper()
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func wantProjectEntries(t *testing.T, root string) {
	t.Helper()
	got := strings.Join(projectEntries(t, root), " ")
	if want := ".cache data package-lock.json package.json public"; got != want {
		t.Errorf("project folder holds %q, want %q", got, want)
	}
}

// changeAgentName edits one submission so that a rebuild must write some
// pages, and moves its modification time on so that the change shows.
func changeAgentName(t *testing.T, root, name string) {
	t.Helper()
	meta := filepath.Join(root, "data/submissions/demo/v1/full/20260301_agent-a/metadata.toml")
	raw := mustRead(t, meta)
	i := bytes.Index(raw, []byte("name = \""))
	j := bytes.IndexByte(raw[i+8:], '"')
	raw = append(append(append([]byte{}, raw[:i+8]...), name...), raw[i+8+j:]...)
	if err := os.WriteFile(meta, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Duration(len(name)) * time.Second)
	if err := os.Chtimes(meta, future, future); err != nil {
		t.Fatal(err)
	}
}

// TestInterruptedRebuildLeavesSiteWhole fails or cancels a rebuild part
// way through writing its files: the published site must stay byte for
// byte as it was, with nothing left beside it, and the next build must
// publish the change.
//
// The interrupted build starts from a spare: the previous site that the
// second build kept, or ("linked spare") the hard links to the published
// files that the first build into a new folder leaves, whose inodes the
// published site shares: a write into them would show in the site.
func TestInterruptedRebuildLeavesSiteWhole(t *testing.T) {
	for _, how := range []string{"error", "cancel", "error, linked spare", "cancel, linked spare"} {
		t.Run(how, func(t *testing.T) {
			root := fixtureRoot(t, nil)
			opts := fixtureOptions(t, root)
			out := filepath.Join(root, "public")
			if _, err := site.Build(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(how, "linked spare") {
				changeAgentName(t, root, "Agent B")
				if _, err := site.Build(context.Background(), opts); err != nil {
					t.Fatal(err)
				}
			}
			how, _, _ := strings.Cut(how, ",")
			before := snapshot(t, out)
			changeAgentName(t, root, "Agent Renamed")

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var saved atomic.Int32
			boom := errors.New("disk on fire")
			defer site.SetSavedHook(func(rel string) error {
				if saved.Add(1) != 5 {
					return nil
				}
				if how == "cancel" {
					cancel()
					return nil
				}
				return boom
			})()
			_, err := site.Build(ctx, opts)
			if how == "error" && !errors.Is(err, boom) || how == "cancel" && !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted build returned %v", err)
			}
			if saved.Load() < 5 {
				t.Fatalf("the build saved %d files before it stopped; the test wants it stopped part way", saved.Load())
			}
			sameTree(t, "the site after an interrupted build", snapshot(t, out), before)
			wantProjectEntries(t, root)

			site.SetSavedHook(nil)
			rep, err := site.Build(context.Background(), opts)
			if err != nil || rep.UpToDate || rep.Written == 0 {
				t.Fatalf("next build: %+v, %v", rep, err)
			}
			if !strings.Contains(read(t, out, "leaderboard/demo/v1/full/index.html"), "Agent Renamed") {
				t.Error("the next build did not publish the change")
			}
			wantProjectEntries(t, root)
			sameTree(t, "the site after the next build", snapshot(t, out), freshBuild(t, opts))
		})
	}
}

// freshBuild builds opts into a new output folder and returns its
// snapshot: what an incremental build must have published.
func freshBuild(t *testing.T, opts site.Options) map[string]string {
	t.Helper()
	opts.Config.Output = t.TempDir()
	if err := os.Remove(opts.Config.Output); err != nil {
		t.Fatal(err)
	}
	rep, err := site.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != rep.Files {
		t.Errorf("fresh build: %+v; want every file written", rep)
	}
	return snapshot(t, opts.Config.Output)
}

// TestIncrementalBuildsEqualFreshOnes runs a series of rebuilds, each
// starting from the spare of the site before last, through changes that
// add, change and remove pages: after each the site must be exactly what
// a build into a new folder gives.
func TestIncrementalBuildsEqualFreshOnes(t *testing.T) {
	root := fixtureRoot(t, nil)
	opts := fixtureOptions(t, root)
	out := filepath.Join(root, "public")
	sysB := filepath.Join(root, "data/submissions/demo/v1/full/20260302_sys-b")
	sysBMeta := mustRead(t, filepath.Join(sysB, "metadata.toml"))
	inst := filepath.Join(root, "data/datasets/demo/v1/instances.jsonl")
	steps := []struct {
		name   string
		change func()
	}{
		{"first build", func() {}},
		{"a system renamed", func() { changeAgentName(t, root, "Agent B") }},
		{"a submission removed", func() {
			if err := os.RemoveAll(sysB); err != nil {
				t.Fatal(err)
			}
		}},
		{"a statement changed", func() {
			raw := strings.Replace(string(mustRead(t, inst)), "Implement `pkg.new()`.", "Implement `pkg.newer()` now.", 2)
			if err := os.WriteFile(inst, []byte(raw), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"the submission back", func() {
			if err := os.MkdirAll(sysB, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sysB, "metadata.toml"), sysBMeta, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"the system renamed again", func() { changeAgentName(t, root, "Agent C") }},
		{"a published page edited", func() { writeInPlace(t, filepath.Join(out, "index.html"), []byte("<!-- x -->")) }},
	}
	for i, st := range steps {
		st.change()
		rep, err := site.Build(context.Background(), opts)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if rep.UpToDate {
			t.Fatalf("%s: the build did nothing", st.name)
		}
		if i > 0 && rep.Written >= rep.Files {
			t.Errorf("%s: wrote %d of %d files; want only the changed ones", st.name, rep.Written, rep.Files)
		}
		sameTree(t, st.name, snapshot(t, out), freshBuild(t, opts))
		wantProjectEntries(t, root)
	}
}

// TestRebuildSwapsTheWholeSite checks that a rebuild publishes a new
// folder in one step, with unchanged files hard-linked from the previous
// site (same inode) and changed ones new, with renameat2's exchange and
// with the fall-back of two renames.
func TestRebuildSwapsTheWholeSite(t *testing.T) {
	for _, exchange := range []bool{true, false} {
		name := "exchange"
		if !exchange {
			name = "two renames"
		}
		t.Run(name, func(t *testing.T) {
			if !exchange {
				defer site.SetNoExchange()()
			}
			root := fixtureRoot(t, nil)
			opts := fixtureOptions(t, root)
			out := filepath.Join(root, "public")
			if _, err := site.Build(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			dirBefore, _ := os.Stat(out)
			board := filepath.Join(out, "leaderboard/demo/v1/full/index.html")
			css := filepath.Join(out, "assets/style.css")
			boardBefore, _ := os.Stat(board)
			cssBefore, _ := os.Stat(css)
			changeAgentName(t, root, "Agent Renamed")
			rep, err := site.Build(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Written == 0 || rep.Written >= rep.Files {
				t.Errorf("rebuild wrote %d of %d files; want the changed ones only", rep.Written, rep.Files)
			}
			dirAfter, _ := os.Stat(out)
			boardAfter, _ := os.Stat(board)
			cssAfter, _ := os.Stat(css)
			if os.SameFile(dirBefore, dirAfter) {
				t.Error("the output folder is the same folder: the rebuild wrote into the published site")
			}
			if os.SameFile(boardBefore, boardAfter) {
				t.Error("the changed leaderboard kept its inode")
			}
			if !os.SameFile(cssBefore, cssAfter) {
				t.Error("the unchanged style sheet was written again, not linked")
			}
			if !strings.Contains(read(t, out, "leaderboard/demo/v1/full/index.html"), "Agent Renamed") {
				t.Error("the change is not published")
			}
			wantProjectEntries(t, root)
		})
	}
}

// TestBuildStateIsNotPublished checks that nothing starting with a dot is
// in the site (the build state lives under .cache), and that the state
// file of an older build inside the output folder is dropped.
func TestBuildStateIsNotPublished(t *testing.T) {
	root := fixtureRoot(t, nil)
	opts := fixtureOptions(t, root)
	out := filepath.Join(root, "public")
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	// An older build's site: its state file in the output folder.
	if err := os.WriteFile(filepath.Join(out, ".featbench-build.json"), []byte(`{"inputs":"x","files":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	changeAgentName(t, root, "Agent Renamed")
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	for rel := range snapshot(t, out) {
		for _, seg := range strings.Split(rel, "/") {
			if strings.HasPrefix(seg, ".") && seg != "." {
				t.Errorf("published %s", rel)
			}
		}
	}
	states, _ := filepath.Glob(filepath.Join(root, ".cache", "build", "*.state"))
	if len(states) != 1 {
		t.Errorf("build states under .cache/build: %v, want one", states)
	}
}

// writeInPlace overwrites the start of a file without truncating or
// replacing it, as an editor saving in place does.
func writeInPlace(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRebuildRestoresEditedPages edits, replaces and removes published
// files: a rebuild with no input changed must notice by stat and put
// each back as the build made it.
func TestRebuildRestoresEditedPages(t *testing.T) {
	root := fixtureRoot(t, nil)
	opts := fixtureOptions(t, root)
	out := filepath.Join(root, "public")
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, out)
	for _, c := range []struct {
		name string
		edit func(path string)
	}{
		{"edited in place, same size", func(p string) {
			writeInPlace(t, p, []byte("<!-- defaced -->"))
		}},
		{"replaced", func(p string) {
			raw := mustRead(t, p)
			copy(raw, "<!-- defaced -->")
			_ = os.Rename(p, p+".old")
			_ = os.WriteFile(p, raw, 0o644)
			_ = os.Remove(p + ".old")
		}},
		{"removed", func(p string) { _ = os.Remove(p) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.edit(filepath.Join(out, "datasets", "index.html"))
			rep, err := site.Build(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if rep.UpToDate || rep.Written != 1 {
				t.Errorf("rebuild after a published page was %s: %+v; want it written again, alone", c.name, rep)
			}
			sameTree(t, "the site after the rebuild", snapshot(t, out), want)
			if rep, err := site.Build(context.Background(), opts); err != nil || !rep.UpToDate {
				t.Errorf("the build after: %+v, %v; want up to date", rep, err)
			}
		})
	}
}

// TestDownloadIsACopyOfTheData checks that a split's download is never
// the data file itself: editing instances.jsonl in place changes nothing
// published until the next build, which publishes the new data.
func TestDownloadIsACopyOfTheData(t *testing.T) {
	root := fixtureRoot(t, nil)
	opts := fixtureOptions(t, root)
	out := filepath.Join(root, "public")
	src := filepath.Join(root, "data", "datasets", "demo", "v1", "instances.jsonl")
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	orig := string(mustRead(t, src))
	if got := read(t, out, "datasets/demo/v1/full.jsonl"); got != orig {
		t.Fatalf("full.jsonl is\n%q\nwant the instances file\n%q", got, orig)
	}
	// Same size, in place: the inode and the size stay.
	changed := strings.Replace(orig, `"abc123"`, `"def456"`, 1)
	if len(changed) != len(orig) || changed == orig {
		t.Fatal("the fixture has no base_commit abc123 to change")
	}
	writeInPlace(t, src, []byte(changed))
	future := time.Now().Add(2 * time.Second)
	_ = os.Chtimes(src, future, future)
	if got := read(t, out, "datasets/demo/v1/full.jsonl"); got != orig {
		t.Error("editing the data file changed the published download")
	}
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if got := read(t, out, "datasets/demo/v1/full.jsonl"); got != changed {
		t.Errorf("after the rebuild full.jsonl is\n%q\nwant\n%q", got, changed)
	}
	a, _ := os.Stat(src)
	b, _ := os.Stat(filepath.Join(out, "datasets", "demo", "v1", "full.jsonl"))
	if os.SameFile(a, b) {
		t.Error("the download is the data file itself")
	}
	if got := string(mustRead(t, src)); got != changed {
		t.Error("the build changed the data file")
	}
}

// TestLeftoversOfKilledBuildsRemoved puts what a killed build leaves
// beside the output (a stage, a previous site moved aside) and checks
// that the next build removes them, up to date or not, but not those of
// a build still running.
func TestLeftoversOfKilledBuildsRemoved(t *testing.T) {
	root := fixtureRoot(t, nil)
	opts := fixtureOptions(t, root)
	out := filepath.Join(root, "public")
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	// pid 2^22+1 is beyond Linux's pid_max: no such process.
	dead := []string{out + ".stage-4194305", out + ".old-4194305"}
	alive := out + ".stage-" + strconv.Itoa(os.Getppid())
	for _, d := range append(dead, alive) {
		if err := os.MkdirAll(filepath.Join(d, "datasets"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "index.html"), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := site.Build(context.Background(), opts)
	if err != nil || !rep.UpToDate {
		t.Fatalf("rebuild: %+v, %v", rep, err)
	}
	for _, d := range dead {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there", filepath.Base(d))
		}
	}
	if _, err := os.Stat(alive); err != nil {
		t.Errorf("the stage of a running build was removed: %v", err)
	}
}

// TestOutputOfOtherFilesRefused checks that a build does not replace an
// existing output folder that holds files but is no site of ours.
func TestOutputOfOtherFilesRefused(t *testing.T) {
	root := fixtureRoot(t, nil)
	opts := fixtureOptions(t, root)
	docs := filepath.Join(root, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "guide.md"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Config.Output = "docs"
	_, err := site.Build(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "not a site this build wrote") {
		t.Fatalf("build into a folder of other files: %v", err)
	}
	if got := string(mustRead(t, filepath.Join(docs, "guide.md"))); got != "mine" {
		t.Error("the folder's file changed")
	}
	if left, _ := filepath.Glob(docs + ".stage-*"); len(left) != 0 {
		t.Errorf("stage left: %v", left)
	}
	// An empty folder is fine.
	empty := filepath.Join(root, "empty")
	_ = os.Mkdir(empty, 0o755)
	opts.Config.Output = "empty"
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Errorf("build into an empty folder: %v", err)
	}
}

// TestPathBaseURLHasNoFeedOrSitemap checks that with base_url a path the
// build warns, naming the key and what to set, and publishes no
// sitemap.xml, feed.xml or Sitemap line rather than invalid ones.
func TestPathBaseURLHasNoFeedOrSitemap(t *testing.T) {
	root := fixtureRoot(t, nil)
	opts := fixtureOptions(t, root) // base_url "/sub/"
	var log bytes.Buffer
	opts.Log = &log
	out := filepath.Join(root, "public")
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"sitemap.xml", "feed.xml"} {
		if _, err := os.Stat(filepath.Join(out, rel)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s published with a path-only base_url (stat: %v)", rel, err)
		}
	}
	if robots := read(t, out, "robots.txt"); strings.Contains(robots, "Sitemap") || !strings.Contains(robots, "User-agent: *") {
		t.Errorf("robots.txt = %q", robots)
	}
	if w := log.String(); !strings.Contains(w, "warning: site.base_url") || !strings.Contains(w, "https://<owner>.github.io/<repo>/") {
		t.Errorf("no warning naming site.base_url and the URL to set: %q", w)
	}
	if u := site.FeedURL(opts); u != "" {
		t.Errorf("FeedURL = %q with a path-only base_url", u)
	}

	// With a full URL: all three, absolute, and no warning.
	opts.Config.BaseURL = "https://example.org/sub/"
	log.Reset()
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read(t, out, "sitemap.xml"), "<loc>https://example.org/sub/</loc>") ||
		!strings.Contains(read(t, out, "feed.xml"), `<link href="https://example.org/sub/feed.xml" rel="self">`) ||
		!strings.Contains(read(t, out, "robots.txt"), "Sitemap: https://example.org/sub/sitemap.xml") {
		t.Error("with a full base_url the sitemap, feed and robots.txt are not absolute")
	}
	if strings.Contains(log.String(), "warning") {
		t.Errorf("warned with a full base_url: %q", log.String())
	}
	if u := site.FeedURL(opts); u != "/sub/feed.xml" {
		t.Errorf("FeedURL = %q, want /sub/feed.xml", u)
	}
	// Back to a path: the feed and sitemap are removed from the site.
	opts.Config.BaseURL = "/sub/"
	if rep, err := site.Build(context.Background(), opts); err != nil || rep.Removed != 2 {
		t.Errorf("rebuild with a path base_url: %+v, %v; want sitemap.xml and feed.xml removed", rep, err)
	}
}

// TestFirstBuildLeavesLinkedSpare: a build into a new output folder leaves
// the next build a spare of hard links to what it published (the same
// inodes), so that the first rebuild does not link the whole site anew.
func TestFirstBuildLeavesLinkedSpare(t *testing.T) {
	root := fixtureRoot(t, nil)
	opts := fixtureOptions(t, root)
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	spares, _ := filepath.Glob(filepath.Join(root, ".cache", "build", "*.spare"))
	if len(spares) != 1 {
		t.Fatalf("spares %q after the first build, want one", spares)
	}
	list := strings.Fields(string(mustRead(t, filepath.Join(spares[0], ".featbench-spare"))))
	files := 0
	for _, v := range snapshot(t, filepath.Join(root, "public")) {
		if v != "d" {
			files++
		}
	}
	if len(list) != files {
		t.Errorf("the spare lists %d files, the site has %d", len(list), files)
	}
	for _, rel := range list {
		a, err := os.Stat(filepath.Join(spares[0], rel))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.Stat(filepath.Join(root, "public", rel))
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(a, b) {
			t.Errorf("%s: the spare's copy is not the published file", rel)
		}
	}
	wantProjectEntries(t, root)
}

// TestSubmissionFilesAreCopies: a submission's published results.jsonl
// is a copy of the data file (copied by the kernel, not read by the
// build): byte for byte the same, never the file itself, so editing data/
// in place changes nothing published until the next build, which
// publishes the edit; a rebuild with nothing changed keeps the copy.
func TestSubmissionFilesAreCopies(t *testing.T) {
	root := fixtureRoot(t, nil)
	opts := fixtureOptions(t, root)
	out := filepath.Join(root, "public")
	src := filepath.Join(root, "data", "submissions", "demo", "v1", "full", "20260301_agent-a", "results.jsonl")
	pub := filepath.Join(out, "datasets", "demo", "v1", "systems", "agent-a", "full", "results.jsonl")
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	orig := string(mustRead(t, src))
	if got := string(mustRead(t, pub)); got != orig {
		t.Fatalf("the published results.jsonl is\n%q\nwant the submission's\n%q", got, orig)
	}
	a, _ := os.Stat(src)
	b, _ := os.Stat(pub)
	if os.SameFile(a, b) {
		t.Fatal("the published results.jsonl is the data file itself")
	}
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if c, _ := os.Stat(pub); !os.SameFile(b, c) {
		t.Error("a rebuild with nothing changed wrote the results.jsonl again")
	}
	changed := strings.Replace(orig, `"cost":0.5`, `"cost":0.7`, 1)
	if len(changed) != len(orig) || changed == orig {
		t.Fatal("the fixture has no cost 0.5 to change")
	}
	writeInPlace(t, src, []byte(changed))
	future := time.Now().Add(2 * time.Second)
	_ = os.Chtimes(src, future, future)
	if got := string(mustRead(t, pub)); got != orig {
		t.Error("editing the data file changed the published results.jsonl")
	}
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if got := string(mustRead(t, pub)); got != changed {
		t.Errorf("after the rebuild results.jsonl is\n%q\nwant\n%q", got, changed)
	}
	if got := string(mustRead(t, src)); got != changed {
		t.Error("the build changed the data file")
	}
}
