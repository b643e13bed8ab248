// Package canary adds canary tests to an instance's fail-to-pass test files
// at grading: copies of a test that expect another value (an asserted
// literal changed, a pytest.raises match changed by a letter, another
// exception), which a correct implementation fails and an implementation
// that reads the expected values out of the tests (an oracle), or a forged
// report, passes. Every fail-to-pass test function is renamed too, with
// fresh names made of the file's own words, so that neither a name nor
// the order tells the dataset's test from its canaries.
//
// The work is done in the container, as root, before pytest, by an
// embedded script ([Source], installed as [File]):
//
//	python3 -I /fb/featbench_canary.py SPEC.json OUT.json
//
// SPEC is a [Spec]; OUT, written mode 0600 so that the tests' user cannot
// read it, is a [Mapping]. With Spec.Sites nil the script derives: every
// mutable place of every test gets canaries, and the gold patch's run says
// which places are sound ([Sound]): collection keeps those in the dataset
// (bench.Instance.Canaries). Grading gives them back, and the script draws,
// with a seed nobody knows before the run, which places get a canary and
// what each expects.
package canary

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/featbench/featbench/bench"
)

//go:embed canary.py
var source string

// File is the name the script is installed under.
const File = "featbench_canary.py"

// Source returns the script's Python source.
func Source() []byte { return []byte(source) }

// MaxPerInstance is how many canaries grading adds to an instance at most.
const MaxPerInstance = 16

// Spec is the script's input.
type Spec struct {
	Root  string         `json:"root"`
	Seed  uint64         `json:"seed"`
	Tests []string       `json:"tests"` // test functions' ids, without parameters
	Sites []bench.Canary `json:"sites"` // nil: derive
	Max   int            `json:"max,omitempty"`
}

// Entry is one canary the script added.
type Entry struct {
	ID   string       `json:"id"`   // the canary's function id
	Twin string       `json:"twin"` // the test it is a copy of, by its dataset id
	Site bench.Canary `json:"site"` // where it differs (Alts: the one it expects)
}

// Mapping is the script's output: the dataset's test functions by their
// new names, and the canaries.
type Mapping struct {
	Tests    map[string]string `json:"tests"` // dataset function id -> its id in the run
	Canaries []Entry           `json:"canaries"`
	Skipped  map[string]string `json:"skipped,omitempty"` // function id -> why it has no canary
}

// ParseMapping decodes the script's output.
func ParseMapping(raw []byte) (*Mapping, error) {
	var m Mapping
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("the canary script's output: %w", err)
	}
	for from, to := range m.Tests {
		if !sameScope(from, to) {
			return nil, fmt.Errorf("the canary script's output renames %s to %s, in another file or class", from, to)
		}
	}
	for _, c := range m.Canaries {
		if !sameScope(c.Twin, c.ID) || m.Tests[c.Twin] == "" {
			return nil, fmt.Errorf("the canary script's output gives canary %s of %s, which it did not rename or which is in another file or class", c.ID, c.Twin)
		}
	}
	return &m, nil
}

// sameScope says whether two function ids are in one file and class.
func sameScope(a, b string) bool {
	i, j := strings.LastIndex(a, "::"), strings.LastIndex(b, "::")
	return i > 0 && j > 0 && a[:i] == b[:j]
}

// Func is the function id of a test id: its parameters cut off.
func Func(id string) string {
	if i := strings.IndexByte(id, '['); i >= 0 {
		return id[:i]
	}
	return id
}

// Functions lists the function ids of ids that name test functions
// (path::...), each once, sorted.
func Functions(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		f := Func(id)
		if !strings.Contains(f, "::") || seen[f] {
			continue
		}
		seen[f] = true
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Run is the ids of one run with canaries: what to ask pytest's report
// for, and how to read its outcomes back.
type Run struct {
	// Expected are the ids to ask the report for: each dataset id under
	// its name in the run, then each canary's tests.
	Expected []string
	// Back is the dataset id of each renamed id.
	Back map[string]string
	// Canaries are the canaries' test ids, each with its twin's dataset id.
	Canaries map[string]string
	// Entries are the canaries' test ids, each with what the script said
	// of it.
	Entries map[string]*Entry
}

// Ids translates a run's expected dataset ids through the mapping (m may
// be nil: the ids as they are) and adds the canaries of the tests among
// them: a canary of a parametrized test has the test's parameters.
func (m *Mapping) Ids(ids []string) Run {
	r := Run{Back: map[string]string{}, Canaries: map[string]string{}, Entries: map[string]*Entry{}}
	for _, id := range ids {
		r.Expected = append(r.Expected, m.rename(id))
		r.Back[m.rename(id)] = id
	}
	if m == nil {
		return r
	}
	for _, id := range ids {
		f := Func(id)
		for i := range m.Canaries {
			c := &m.Canaries[i]
			if c.Twin != f {
				continue
			}
			cid := c.ID + id[len(f):]
			if _, dup := r.Canaries[cid]; dup || r.Back[cid] != "" {
				continue
			}
			r.Canaries[cid], r.Entries[cid] = id, c
			r.Expected = append(r.Expected, cid)
		}
	}
	return r
}

func (m *Mapping) rename(id string) string {
	if m == nil {
		return id
	}
	f := Func(id)
	if to, ok := m.Tests[f]; ok {
		return to + id[len(f):]
	}
	return id
}

// Sound lists, from a derivation run of the gold patch, the places grading
// may use: places of tests whose renamed dataset tests all passed, every
// canary of which failed; of a "raises" place, the exceptions every canary
// expecting which failed. passed says whether a dataset test passed
// (under its dataset id), failed whether a canary test failed.
func Sound(run Run, passed, failed func(id string) bool) []bench.Canary {
	// A test that its renaming broke gets no canary.
	broken := map[string]bool{}
	for _, orig := range run.Back {
		if !passed(orig) {
			broken[Func(orig)] = true
		}
	}
	type key struct {
		test string
		n    int
	}
	sites := map[key]*bench.Canary{}
	unsound := map[key]bool{}        // a place with a canary gold passed
	unsoundAlt := map[key][]string{} // exceptions a canary gold passed expected
	for cid, twin := range run.Canaries {
		e := run.Entries[cid]
		if broken[Func(twin)] {
			continue
		}
		k := key{e.Site.Test, e.Site.N}
		c := sites[k]
		if c == nil {
			c = &bench.Canary{Test: e.Site.Test, N: e.Site.N, Kind: e.Site.Kind}
			sites[k] = c
		}
		if !failed(cid) {
			if e.Site.Kind == "raises" {
				unsoundAlt[k] = append(unsoundAlt[k], e.Site.Alts...)
			} else {
				unsound[k] = true
			}
			continue
		}
		for _, a := range e.Site.Alts {
			if !slices.Contains(c.Alts, a) {
				c.Alts = append(c.Alts, a)
			}
		}
	}
	var out []bench.Canary
	for k, c := range sites {
		c.Alts = slices.DeleteFunc(c.Alts, func(a string) bool { return slices.Contains(unsoundAlt[k], a) })
		if unsound[k] || (c.Kind == "raises" && len(c.Alts) == 0) {
			continue
		}
		sort.Strings(c.Alts)
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Test != out[j].Test {
			return out[i].Test < out[j].Test
		}
		return out[i].N < out[j].N
	})
	return out
}
