package patch_test

import (
	"slices"
	"testing"

	"github.com/featbench/featbench/internal/patch"
)

func mustParse(t *testing.T, diff string) *patch.Patch {
	t.Helper()
	p, err := patch.Parse([]byte(diff))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// modify is a one-line change of name.
func modify(name string) string {
	return "diff --git a/" + name + " b/" + name + "\n--- a/" + name + "\n+++ b/" + name + "\n@@ -1 +1 @@\n-a\n+b\n"
}

func TestFiles(t *testing.T) {
	p := mustParse(t, modify("a.py")+
		"diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"+
		"diff --git a/old.py b/new.py\nsimilarity index 100%\nrename from old.py\nrename to new.py\n"+
		modify("a.py"))
	if got, want := patch.Files(p), []string{"a.py", "gone.py", "new.py"}; !slices.Equal(got, want) {
		t.Errorf("Files = %q, want %q", got, want)
	}
	if patch.Files(nil) != nil || patch.Files(&patch.Patch{}) != nil {
		t.Error("no patch touches files")
	}
}

func TestFileRecall(t *testing.T) {
	gold := mustParse(t, modify("a.py")+modify("b.py")+modify("c.py")+modify("d.py"))
	for _, tc := range []struct {
		name string
		pred *patch.Patch
		want float64
		same bool
	}{
		{"all of them", mustParse(t, modify("d.py")+modify("c.py")+modify("b.py")+modify("a.py")), 1, true},
		{"all of them and more", mustParse(t, modify("a.py")+modify("b.py")+modify("c.py")+modify("d.py")+modify("e.py")), 1, false},
		{"half", mustParse(t, modify("a.py")+modify("c.py")+modify("x.py")), 0.5, false},
		{"a file twice counts once", mustParse(t, modify("a.py")+modify("a.py")), 0.25, false},
		{"none of them", mustParse(t, modify("x.py")), 0, false},
		{"an empty prediction", &patch.Patch{}, 0, false},
		{"no prediction", nil, 0, false},
	} {
		if got := patch.FileRecall(tc.pred, gold); got != tc.want {
			t.Errorf("%s: FileRecall = %v, want %v", tc.name, got, tc.want)
		}
		if got := patch.SameFiles(tc.pred, gold); got != tc.same {
			t.Errorf("%s: SameFiles = %v, want %v", tc.name, got, tc.same)
		}
	}
	if got := patch.FileRecall(gold, &patch.Patch{}); got != 0 {
		t.Errorf("against a gold patch without files: %v, want 0", got)
	}
	if patch.SameFiles(nil, &patch.Patch{}) {
		t.Error("SameFiles of two empty patches: an empty prediction localises nothing")
	}
}

func TestCommands(t *testing.T) {
	for _, tc := range []struct {
		keep string
		want []string
	}{
		{"", []string{"sh", "-c", "git reset --hard -q && git clean -fdq"}},
		{".fb", []string{"sh", "-c", "git reset --hard -q && git clean -fdq -e '/.fb/'"}},
		{"./harness/../.fb/", []string{"sh", "-c", "git reset --hard -q && git clean -fdq -e '/.fb/'"}},
		{"it's", []string{"sh", "-c", `git reset --hard -q && git clean -fdq -e '/it'\''s/'`}},
		{"/fb", []string{"sh", "-c", "git reset --hard -q && git clean -fdq"}},
	} {
		if got := patch.ResetCommand(tc.keep); !slices.Equal(got, tc.want) {
			t.Errorf("ResetCommand(%q) = %q, want %q", tc.keep, got, tc.want)
		}
	}
	cs := patch.ApplyCommands("/fb/p.diff")
	if len(cs) != 3 || !cs[2].LeavesRejects || cs[0].LeavesRejects || cs[1].LeavesRejects {
		t.Errorf("ApplyCommands = %+v", cs)
	}
}
