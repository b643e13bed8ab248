package history

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// buildLibrary makes a small library's history: a release, a merged pull
// request and a squashed one with a changelog naming them, a pre-release,
// and a second release.
func buildLibrary(t *testing.T) *testRepo {
	r := newTestRepo(t)
	r.write("lib/core.py", "def area(w, h):\n    return w * h\n",
		"tests/test_core.py", "from lib.core import area\n\ndef test_area():\n    assert area(2, 3) == 6\n",
		"CHANGELOG.md", "# Changelog\n\n## 1.0.0\n\n- First release.\n")
	r.commit("Initial import")
	r.tag("v1.0.0", "Release 1.0.0")

	r.git("checkout", "-q", "-b", "scale")
	r.write("lib/core.py", "def area(w, h, scale=1):\n    return w * h * scale\n",
		"tests/test_core.py", "from lib.core import area\n\ndef test_area():\n    assert area(2, 3) == 6\n\ndef test_scale():\n    assert area(2, 3, scale=2) == 12\n")
	r.commit("area takes a scale")
	r.git("checkout", "-q", "main")
	r.merge("scale", "Merge pull request #5 from someone/scale\n\nAdd a scale to area\n\nArea can be scaled now.")

	r.write("lib/core.py", "def area(w, h, scale=1):\n    if w < 0 or h < 0:\n        raise ValueError('negative')\n    return w * h * scale\n",
		"tests/test_core.py", "import pytest\nfrom lib.core import area\n\ndef test_area():\n    assert area(2, 3) == 6\n\ndef test_scale():\n    assert area(2, 3, scale=2) == 12\n\ndef test_negative():\n    with pytest.raises(ValueError):\n        area(-1, 2)\n")
	r.commit("Reject negative sides (#6)\n\nFixes #2.")
	r.tag("v1.1.0rc1", "")
	r.write("CHANGELOG.md", "# Changelog\n\n## 1.1.0\n\n### Added\n\n- `area` takes a `scale` (#5).\n\n### Fixed\n\n- Negative sides raise (#2).\n\n## 1.0.0\n\n- First release.\n")
	r.commit("Prepare 1.1.0")
	r.tag("v1.1.0", "")
	return r
}

func TestReadLibrary(t *testing.T) {
	r := buildLibrary(t)
	ctx := context.Background()
	h, err := Read(ctx, r.g(), Options{Tip: "main", IsTest: isTestPath})
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, rel := range h.Releases {
		tags = append(tags, rel.Tag)
	}
	if !reflect.DeepEqual(tags, []string{"v1.0.0", "v1.1.0"}) {
		t.Fatalf("releases %q (the release candidate is no release)", tags)
	}
	if len(h.SkippedTags) != 1 || h.SkippedTags[0].Tag != "v1.1.0rc1" {
		t.Errorf("skipped tags %+v", h.SkippedTags)
	}
	first, second := h.Releases[0], h.Releases[1]
	if first.Message != "Release 1.0.0" || second.Message != "" {
		t.Errorf("tag messages %q %q", first.Message, second.Message)
	}
	if len(first.Pulls) != 0 || !reflect.DeepEqual(second.Pulls, []int{5, 6}) {
		t.Errorf("pulls by release: %v %v", first.Pulls, second.Pulls)
	}
	if second.Notes.Source != NotesChangelog || second.Notes.Heading != "1.1.0" || len(second.Notes.Entries) != 2 {
		t.Fatalf("1.1.0 notes %+v", second.Notes)
	}
	// The feature entry names #5; the fix names issue #2, which the
	// squash commit of #6 says it fixes.
	if got := second.Notes.Links; !reflect.DeepEqual(got, [][]Link{{{5, LinkNamed}}, {{6, LinkIssue}}}) {
		t.Errorf("links %+v", got)
	}
	if second.Notes.Entries[0].Kind != Feature || second.Notes.Entries[1].Kind != Fix {
		t.Errorf("kinds %+v", second.Notes.Entries)
	}
	if len(h.Pulls) != 2 {
		t.Fatalf("pulls %+v", h.Pulls)
	}
	merge, squash := h.Pulls[0], h.Pulls[1]
	if merge.Number != 5 || merge.From != FromMerge || merge.Title != "Add a scale to area" || merge.Body != "Area can be scaled now." {
		t.Errorf("merge pull request %+v", merge.PullRequest)
	}
	if squash.Number != 6 || squash.From != FromSquash || squash.Title != "Reject negative sides" || squash.Body != "Fixes #2." {
		t.Errorf("squash pull request %+v", squash.PullRequest)
	}
	if !reflect.DeepEqual(merge.Patches.CodeFiles, []string{"lib/core.py"}) || !reflect.DeepEqual(merge.Patches.TestFiles, []string{"tests/test_core.py"}) {
		t.Errorf("split %+v", merge.Patches)
	}
	// Code and test patches on the base give the merge's tree.
	checkApplies(t, r, merge)
	checkApplies(t, r, squash)

	// A window leaves out the first release, and the pull requests
	// merged before it.
	h, err = Read(ctx, r.g(), Options{Tip: "main", IsTest: isTestPath, Window: Window{Since: time.Date(2024, 1, 4, 0, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Releases) != 1 || h.Releases[0].Tag != "v1.1.0" || len(h.Pulls) != 2 {
		t.Errorf("windowed: %d releases, %d pulls", len(h.Releases), len(h.Pulls))
	}
	h, err = Read(ctx, r.g(), Options{Tip: "main", IsTest: isTestPath, Window: Window{Until: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Releases) != 1 || h.Releases[0].Tag != "v1.0.0" || len(h.Pulls) != 0 {
		t.Errorf("until: %d releases, %d pulls", len(h.Releases), len(h.Pulls))
	}
}

// checkApplies applies a change's code and test patches to its base in a
// fresh work tree and compares the result with the merge commit's tree.
func checkApplies(t *testing.T, r *testRepo, ch Change) {
	t.Helper()
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "--detach", wt, ch.Base)
	for _, p := range []string{ch.Patches.Test, ch.Patches.Code} {
		if p == "" {
			continue
		}
		cmd := exec.Command("git", "-C", wt, "apply", "-")
		cmd.Stdin = strings.NewReader(p)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("#%d: git apply: %v\n%s", ch.Number, err, out)
		}
	}
	out, err := exec.Command("git", "-C", wt, "diff", ch.Merge, "--stat").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	omitted := map[string]bool{}
	for _, o := range ch.Patches.Omitted {
		omitted[o.Path] = true
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.TrimSpace(strings.Split(l, "|")[0])
		if l != "" && strings.Contains(l, "|") && !omitted[f] {
			t.Errorf("#%d: after both patches the tree differs from the merge in %s", ch.Number, f)
		}
	}
}

// A merge whose two sides both moved on since they parted, three commits
// each: the first parent is the base (git's convention, which GitHub's
// merges follow), so the patch is the branch's work and none of the
// mainline's. A merge commit that changes what neither side touched (an
// "evil merge": work done in the merge itself) is refused: its
// first-parent diff is not the pull request's.
func TestMergeOfTwoEqualParents(t *testing.T) {
	r := newTestRepo(t)
	r.write("a.py", "A = 1\n", "b.py", "B = 1\n", "c.py", "C = 1\n")
	r.commit("start")
	r.git("checkout", "-q", "-b", "feature")
	for i := 2; i <= 4; i++ {
		r.write("b.py", strings.Repeat("B = 1\n", i))
		r.commit("feature work")
	}
	r.git("checkout", "-q", "main")
	for i := 2; i <= 4; i++ {
		r.write("a.py", strings.Repeat("A = 1\n", i))
		r.commit("mainline work")
	}
	r.git("branch", "before")
	merged := r.merge("feature", "Merge pull request #7 from o/feature\n\nFeature work")

	r.git("checkout", "-q", "-b", "evil", "before")
	r.now = r.now.Add(24 * time.Hour)
	r.git("merge", "-q", "--no-ff", "--no-commit", "feature")
	r.write("c.py", "C = 2\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "Merge pull request #8 from o/feature\n\nWith extras")
	evil := r.git("rev-parse", "HEAD")

	ctx := context.Background()
	g := r.g()
	cs, err := g.Commits(ctx, []string{merged, evil})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := g.change(ctx, mustPR(t, cs[0]), isTestPath)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Problem != "" || !reflect.DeepEqual(ch.Patches.CodeFiles, []string{"b.py"}) {
		t.Errorf("the proper merge: problem %q, files %v (want only the branch's b.py)", ch.Problem, ch.Patches.CodeFiles)
	}
	checkApplies(t, r, *ch)
	ch, err = g.change(ctx, mustPR(t, cs[1]), isTestPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ch.Problem, "changes c.py, which the pull request's own commits never touched") {
		t.Errorf("the evil merge was taken: problem %q, files %v", ch.Problem, ch.Patches.CodeFiles)
	}
}

func mustPR(t *testing.T, c Commit) PullRequest {
	t.Helper()
	pr, ok, why := FromCommit(c)
	if !ok {
		t.Fatalf("%s is no pull request: %s", c.Hash, why)
	}
	return pr
}

// A squash commit naming two pull requests is neither's: its change cannot
// be split between them. A revert naming the reverted one inside its
// title is the revert's own.
func TestSquashNamingTwoPullRequests(t *testing.T) {
	r := newTestRepo(t)
	r.write("a.py", "A = 1\n")
	r.commit("start")
	r.write("a.py", "A = 2\n")
	two := r.commit("Add a and b (#3) (#4)")
	r.write("a.py", "A = 3\n")
	list := r.commit("Several at once (#9, #10)")
	r.write("a.py", "A = 4\n")
	revert := r.commit("Revert \"Add a and b (#3)\" (#11)\n\n* first try\n\n* second try\n\nCo-authored-by: B <b@example.invalid>")
	ctx := context.Background()
	cs, err := r.g().Commits(ctx, []string{revert, list, two})
	if err != nil {
		t.Fatal(err)
	}
	prs, skipped := PullRequests(cs)
	// GitHub's default squash message lists the squashed commits: no
	// description.
	if len(prs) != 1 || prs[0].Number != 11 || prs[0].Title != `Revert "Add a and b (#3)"` || prs[0].Body != "" {
		t.Errorf("pull requests %+v", prs)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0].Reason, "#9 and #10") || !strings.Contains(skipped[1].Reason, "#3 and #4") {
		t.Errorf("skipped %+v", skipped)
	}
}

// A release tagged on a side branch (a maintenance branch, merged back
// later): its commits are what its tag reaches and no earlier release
// does, and the next mainline release does not count them again.
func TestTagOnNonFirstParent(t *testing.T) {
	r := newTestRepo(t)
	r.write("a.py", "A = 1\n")
	r.commit("start")
	r.tag("v1.0", "")
	r.git("checkout", "-q", "-b", "maint")
	r.write("b.py", "B = 1\n")
	r.commit("Backport a fix (#2)")
	r.tag("v1.0.1", "")
	r.git("checkout", "-q", "main")
	r.write("c.py", "C = 1\n")
	r.commit("New thing (#3)")
	r.merge("maint", "Merge branch 'maint'")
	r.write("d.py", "D = 1\n")
	r.commit("Another (#4)")
	r.tag("v1.1", "")
	ctx := context.Background()
	h, err := Read(ctx, r.g(), Options{Tip: "main", IsTest: isTestPath})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{}
	for _, rel := range h.Releases {
		got[rel.Tag] = rel.Pulls
	}
	want := map[string][]int{"v1.0": nil, "v1.0.1": {2}, "v1.1": {3, 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pulls by release %v, want %v", got, want)
	}
	// The side branch's tag is not on the first-parent line.
	fp := r.git("rev-list", "--first-parent", "main")
	tagged := r.git("rev-parse", "v1.0.1^{commit}")
	if strings.Contains(fp, tagged) {
		t.Fatal("the test's tag is on the first-parent line")
	}
}

// A release the changelog has no section for gets its notes from its
// tag's message, or, when that says nothing but the version, from the
// titles of the pull requests it brought; the reason says so.
func TestChangelogWithoutSection(t *testing.T) {
	r := newTestRepo(t)
	r.write("a.py", "A = 1\n", "CHANGES.rst", "1.0\n===\n\n- First.\n")
	r.commit("start")
	r.tag("1.0", "")
	r.write("a.py", "A = 2\n")
	r.commit("Add an option to frobnicate (#2)")
	r.tag("1.1", "1.1 Release")
	r.write("a.py", "A = 3\n")
	r.commit("Fix the frobnicator (#3)")
	r.tag("1.2", "frobnicate fixes, a new knob")
	h, err := Read(context.Background(), r.g(), Options{Tip: "main", IsTest: isTestPath})
	if err != nil {
		t.Fatal(err)
	}
	rel := h.Releases[1]
	if rel.Notes.Source != NotesGenerated || rel.NotesReason != "the changelog CHANGES.rst has no section for 1.1" {
		t.Errorf("1.1 notes from %q: %q", rel.Notes.Source, rel.NotesReason)
	}
	if len(rel.Notes.Entries) != 1 || rel.Notes.Entries[0].Kind != Feature || !reflect.DeepEqual(rel.Notes.Links[0], []Link{{2, LinkTitle}}) {
		t.Errorf("1.1 entries %+v %+v", rel.Notes.Entries, rel.Notes.Links)
	}
	rel = h.Releases[2]
	if rel.Notes.Source != NotesTag || len(rel.Notes.Entries) != 2 || rel.Notes.Entries[1].Text != "a new knob" {
		t.Errorf("1.2 notes %+v", rel.Notes)
	}
	if h.Releases[0].Notes.Source != NotesChangelog {
		t.Errorf("1.0 notes %+v", h.Releases[0].Notes)
	}
}

// A pull request whose test patch deletes a test file and rewrites
// another, with a binary file beside: the deletion is listed, the added
// test lines are counted, the binary file is left out of both patches,
// and the patches still apply.
func TestDeletedTestsAndBinaryFile(t *testing.T) {
	r := newTestRepo(t)
	r.write("lib.py", "X = 1\n", "tests/test_old.py", "def test_old():\n    pass\n", "tests/test_lib.py", "def test_x():\n    pass\n")
	r.commit("start")
	r.write("lib.py", "X = 2\n", "tests/test_old.py", "", "tests/test_lib.py", "def test_x():\n    assert True\n\ndef test_y():\n    pass\n")
	if err := os.WriteFile(filepath.Join(r.dir, "logo.png"), []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0, 0xff}, 0o644); err != nil {
		t.Fatal(err)
	}
	r.commit("Rework the tests (#12)")
	h, err := Read(context.Background(), r.g(), Options{Tip: "main", IsTest: isTestPath})
	if err != nil {
		t.Fatal(err)
	}
	ch := h.Pulls[0]
	p := ch.Patches
	if !reflect.DeepEqual(p.Deleted, []string{"tests/test_old.py"}) || p.TestAdded != 3 {
		t.Errorf("deleted %v, test lines added %d", p.Deleted, p.TestAdded)
	}
	if !reflect.DeepEqual(p.Omitted, []Omission{{Path: "logo.png", Reason: "a binary file"}}) || strings.Contains(p.Code+p.Test, "logo.png") {
		t.Errorf("omitted %+v", p.Omitted)
	}
	checkApplies(t, r, ch)
}

// A commit message with control characters (an escape sequence, a
// right-to-left override, a NUL-free carriage return) and one of a
// megabyte: the message is cleaned and bounded, the title is one line.
func TestHostileCommitMessages(t *testing.T) {
	r := newTestRepo(t)
	r.write("a.py", "A = 1\n")
	r.commit("start")
	r.write("a.py", "A = 2\n")
	r.commit("Add \x1b[31mred\x1b[0m \u202eevil\u202c things (#20)\r\n\r\nBody\x07 line\x1b]0;title\x07")
	r.write("a.py", "A = 3\n")
	big := "Big change (#21)\n\n" + strings.Repeat("all work and no play ", 50_000)
	msgFile := filepath.Join(t.TempDir(), "msg")
	if err := os.WriteFile(msgFile, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	r.now = r.now.Add(24 * time.Hour)
	r.git("commit", "-q", "-a", "-F", msgFile)
	h, err := Read(context.Background(), r.g(), Options{Tip: "main", IsTest: isTestPath})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Pulls) != 2 {
		t.Fatalf("pulls %+v", h.Pulls)
	}
	evil, huge := h.Pulls[0], h.Pulls[1]
	if evil.Title != "Add [31mred[0m evil things" || strings.ContainsAny(evil.Body, "\x1b\x07\r") {
		t.Errorf("title %q, body %q", evil.Title, evil.Body)
	}
	if len(huge.Body) > MaxMessage || !strings.HasSuffix(huge.Body, "longer than the bound]") || huge.Title != "Big change" {
		t.Errorf("a 1 MB message: body of %d bytes, title %q", len(huge.Body), huge.Title)
	}
}

func TestReadExport(t *testing.T) {
	r := buildLibrary(t)
	merge := r.git("rev-parse", "main~2")
	squash := r.git("rev-parse", "main~1")
	dir := t.TempDir()
	write := func(v any) string {
		raw, _ := json.Marshal(v)
		p := filepath.Join(dir, "pulls.json")
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sha := strings.Repeat("a", 40)
	good := write([]map[string]any{
		{"number": 6, "title": "Negative sides", "body": "From the export.\x1b[1m", "merged_at": "2024-01-05T12:00:00Z", "merge_commit_sha": squash, "base": map[string]any{"sha": sha}},
		{"number": 5, "title": "Scale", "body": nil, "merged_at": "2024-01-04T12:00:00Z", "merge_commit_sha": merge, "base": map[string]any{"sha": sha}},
		{"number": 9, "title": "Never merged", "merged_at": nil, "merge_commit_sha": nil, "base": map[string]any{"sha": sha}},
		{"number": 10, "title": "Elsewhere", "merged_at": "2024-01-05T12:00:00Z", "merge_commit_sha": strings.Repeat("b", 40), "base": map[string]any{"sha": sha}},
	})
	h, err := Read(context.Background(), r.g(), Options{Tip: "main", IsTest: isTestPath, Export: good})
	if err != nil {
		t.Fatal(err)
	}
	var nums []int
	for _, c := range h.Pulls {
		nums = append(nums, c.Number)
	}
	if !reflect.DeepEqual(nums, []int{5, 6}) {
		t.Fatalf("pulls %v", nums)
	}
	if p := h.Pulls[1]; p.From != FromExport || p.Body != "From the export.[1m" || p.Base != r.git("rev-parse", squash+"^") {
		t.Errorf("exported #6: %+v (the base is the merge commit's first parent)", p.PullRequest)
	}
	if !slices.ContainsFunc(h.Skipped, func(s Skipped) bool { return strings.Contains(s.Reason, "#10: its merge commit") }) {
		t.Errorf("skipped %+v", h.Skipped)
	}
	for _, c := range []struct {
		entry any
		want  string
	}{
		{map[string]any{"title": "x"}, "entry 0, field number: is missing"},
		{map[string]any{"number": "7", "title": "x"}, "entry 0, field (entry)"},
		{map[string]any{"number": 7, "title": "x", "merged_at": "yesterday"}, "field merged_at"},
		{map[string]any{"number": 7, "title": "x", "merged_at": "2024-01-05T12:00:00Z", "merge_commit_sha": squash, "base": map[string]any{"sha": "HEAD"}}, "field base.sha"},
		{map[string]any{"number": 0, "title": "x"}, "field number: is 0"},
	} {
		p := write([]any{c.entry})
		_, err := ReadExport(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%v: %v, want an error naming the file and %q", c.entry, err, c.want)
		}
	}
}
