package history

import (
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// examples/history.sh gives the example library a history: run twice, it
// makes the same commits; read, it has three releases whose changelog
// sections name the pull requests merged both ways.
func TestExampleHistory(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	script := filepath.Join("..", "..", "examples", "history.sh")
	var tips []string
	var dirs []string
	for range 2 {
		dir := filepath.Join(t.TempDir(), "textkit")
		out, err := exec.Command("bash", script, dir).CombinedOutput()
		if err != nil {
			t.Fatalf("history.sh: %v\n%s", err, out)
		}
		tips = append(tips, strings.TrimSpace(string(out)))
		dirs = append(dirs, dir)
	}
	if tips[0] != tips[1] || len(tips[0]) != 40 {
		t.Fatalf("two runs end at %q and %q", tips[0], tips[1])
	}
	if out, err := exec.Command("bash", script, dirs[0]).CombinedOutput(); err == nil || !strings.Contains(string(out), "exists") {
		t.Errorf("a second run into the same folder: %v %s", err, out)
	}
	h, err := Read(context.Background(), Git{Dir: dirs[0]}, Options{Tip: tips[0], IsTest: isTestPath})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{}
	for _, r := range h.Releases {
		got[r.Tag] = r.Pulls
		if r.Notes.Source != NotesChangelog {
			t.Errorf("%s's notes are from %s (%s)", r.Tag, r.Notes.Source, r.NotesReason)
		}
	}
	if want := map[string][]int{"v0.1.0": nil, "v0.2.0": {3, 4}, "v0.3.0": {5, 6, 7}}; !reflect.DeepEqual(got, want) {
		t.Errorf("pulls by release %v, want %v", got, want)
	}
	var feats []int
	for _, r := range h.Releases {
		for i, e := range r.Notes.Entries {
			if e.Kind == Feature {
				for _, l := range r.Notes.Links[i] {
					feats = append(feats, l.Number)
				}
			}
		}
	}
	if !reflect.DeepEqual(feats, []int{3, 4, 5, 7}) {
		t.Errorf("feature pull requests %v", feats)
	}
	froms := map[int]string{}
	for _, c := range h.Pulls {
		froms[c.Number] = c.From
		if c.Problem != "" || (c.Number != 6 && (len(c.Patches.CodeFiles) == 0 || len(c.Patches.TestFiles) == 0)) {
			t.Errorf("#%d: problem %q, patches %v %v", c.Number, c.Problem, c.Patches.CodeFiles, c.Patches.TestFiles)
		}
	}
	if want := map[int]string{3: FromMerge, 4: FromSquash, 5: FromMerge, 6: FromSquash, 7: FromMerge}; !reflect.DeepEqual(froms, want) {
		t.Errorf("pull requests %v", froms)
	}
}
