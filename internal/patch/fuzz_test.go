package patch_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/patch"
)

// FuzzParseCheck feeds arbitrary bytes to Parse and Check. Neither may
// panic; Parse fails only with a *SyntaxError and Check only with a
// *Refusal; whatever Check accepts, Parse reads, and its files are safe
// to write.
//
//	go test ./internal/patch -run '^$' -fuzz FuzzParseCheck -fuzztime 60s
func FuzzParseCheck(f *testing.F) {
	for _, tc := range parseCases {
		f.Add([]byte(tc.diff))
	}
	for _, tc := range hostile {
		f.Add([]byte(strings.ReplaceAll(tc.diff, "ROOT", "/tmp")))
	}
	for _, e := range readExamples(f) {
		f.Add([]byte(e.Patch))
		f.Add([]byte(e.TestPatch))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, perr := patch.Parse(raw)
		var se *patch.SyntaxError
		if perr != nil && !errors.As(perr, &se) {
			t.Fatalf("Parse failed with %T: %v", perr, perr)
		}
		if perr == nil {
			for _, fl := range p.Files {
				if fl.Path() == "" {
					t.Fatalf("a file without a name: %+v", fl)
				}
			}
			if patch.Empty(raw) != (len(p.Files) == 0) {
				t.Fatalf("Empty = %v with %d files", patch.Empty(raw), len(p.Files))
			}
		}
		cerr := patch.Check(raw, patch.Limits{})
		if cerr == nil {
			if perr != nil {
				t.Fatalf("Check accepts what Parse refuses: %v", perr)
			}
			checkSafe(t, p)
			return
		}
		var r *patch.Refusal
		if !errors.As(cerr, &r) {
			t.Fatalf("Check failed with %T: %v", cerr, cerr)
		}
		if r.Reason == "" {
			t.Fatal("a refusal without a reason")
		}
	})
}

// checkSafe fails when an accepted patch would write somewhere unsafe.
func checkSafe(t *testing.T, p *patch.Patch) {
	t.Helper()
	for _, fl := range p.Files {
		if fl.Binary {
			t.Fatalf("accepted a binary patch: %+v", fl)
		}
		for _, m := range []string{fl.OldMode, fl.NewMode} {
			if m == "120000" || m == "160000" {
				t.Fatalf("accepted mode %s: %+v", m, fl)
			}
		}
		for _, n := range []string{fl.OldPath, fl.NewPath} {
			if strings.HasPrefix(n, "/") || strings.ContainsAny(n, "\\") ||
				strings.ContainsFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("accepted the path %q", n)
			}
			for c := range strings.SplitSeq(n, "/") {
				if c == ".." || strings.EqualFold(c, ".git") {
					t.Fatalf("accepted the path %q", n)
				}
			}
		}
	}
}
