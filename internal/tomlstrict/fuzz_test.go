package tomlstrict

import (
	"strings"
	"testing"
)

// Decode must not panic on any input, its lines must lie in the file, and
// it must refuse whatever the TOML library cannot parse.
//
//	go test ./internal/tomlstrict -run '^$' -fuzz FuzzDecode -fuzztime 60s
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		"name = \"x\"\ndate = 2026-01-01\nopen = true\nattempts = 3\ncost = 1.5\nfigure = \"2\"\n",
		"[[repos]]\nname = \"a\"\nlevels = [1, 2]\n[[repos]]\npyton = \"3.12\"\n",
		"[levels.L1]\npassed = 2\n[levels.L2]\nrate = \"x\"\n",
		"extra = {a = {b = [1, {c = 2}]}}\n",
		"attempts = 1e3\nName = 1\ndate = \"2026-01-01\"\nsite = [[1]]\n",
		"[[site]]\n[site.x]\n[[site]]\n",
		"notes = \"\"\"\na = 1\n\"\"\"\n'q k' = 1\n\"d.k\".x = 2\n",
		"\ufeffname = 1\n",
		"name = \"\xff\"\n",
		"a = " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m model
		lines, ps := Decode("m.toml", data, &m, Options{Reserved: map[string]string{"checked": "no"}, KeysDoc: "KEYS.md"})
		n := strings.Count(string(data), "\n") + 1
		for _, p := range ps {
			if p.File != "m.toml" || p.Line < 0 || p.Line > n || p.Msg == "" {
				t.Errorf("problem %#v in a file of %d lines", p, n)
			}
		}
		for k, l := range lines {
			if l < 1 || l > n {
				t.Errorf("key %q on line %d of %d", k, l, n)
			}
		}
		if lines == nil && len(ps) == 0 {
			t.Error("no lines and no problem: was the file parsed?")
		}
	})
}
