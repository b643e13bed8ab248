package pylock

import (
	"strings"
	"testing"
)

func TestParseFreeze(t *testing.T) {
	f, err := ParseFreeze(`# Editable install with no version control (indexlib==0.1.0)
-e /testbed
Pytest==8.3.5
pluggy==1.5.0
zope.interface==6.0
semver @ file:///testbed
`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range f.Pinned {
		got = append(got, p.Name+"=="+p.Version)
	}
	if strings.Join(got, " ") != "pluggy==1.5.0 pytest==8.3.5 zope-interface==6.0" || len(f.Other) != 2 {
		t.Errorf("pinned %q, other %q", got, f.Other)
	}
	if _, err := ParseFreeze("pytest==8.3.5; rm -rf /\n"); err == nil {
		t.Error("a line that is no pin was read")
	}
}

func TestRequirementsAndDiff(t *testing.T) {
	h := "sha256:" + strings.Repeat("0a", 32)
	lock := []Package{{Name: "wordcase", Version: "1.2", Hashes: []string{h}}, {Name: "local-only", Version: "2.0"}, {Name: "pluggy", Version: "1.5.0", Hashes: []string{h}}}
	if got := Requirements(lock); got != "pluggy==1.5.0 --hash="+h+"\nwordcase==1.2 --hash="+h+"\n" {
		t.Errorf("requirements:\n%s", got)
	}
	if d := Diff(lock, lock); len(d) != 0 {
		t.Errorf("a lock differs from itself: %q", d)
	}
	got := []Package{{Name: "wordcase", Version: "1.3"}, {Name: "pluggy", Version: "1.5.0"}, {Name: "extra", Version: "1"}}
	want := []string{"local-only: 2.0 in the lock, not installed", "wordcase: 1.2 in the lock, 1.3 installed", "extra: 1 installed, not in the lock"}
	if d := Diff(lock, got); strings.Join(d, "; ") != strings.Join(want, "; ") {
		t.Errorf("diff %q; want %q", d, want)
	}
}

func TestCheck(t *testing.T) {
	msgs := Check([]Package{{Name: "Py_Test", Version: "8"}, {Name: "a", Version: "1 2"}, {Name: "a", Version: "1", Hashes: []string{"md5:00"}}})
	want := []string{"lock[0].name", "lock[1].version", "lock[2].name: \"a\" is pinned twice", "lock[2].hashes[0]"}
	for _, w := range want {
		if !strings.Contains(strings.Join(msgs, "\n"), w) {
			t.Errorf("no %q in %q", w, msgs)
		}
	}
}
