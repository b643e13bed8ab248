package bench

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
)

// CollectionFile, in a dataset version folder, says how cmd/collect built
// the dataset. It is optional; the site shows it on the dataset's page.
const CollectionFile = "collection.json"

// Limits of collection.json.
const (
	maxCollectionFile = 8 << 20
	maxCollectionText = 2_000 // a repository name, file, stage or reason
	maxCollectionList = 100_000
)

// Collection is collection.json: per repository, how far its test files
// got through the stages and why each one that stopped was dropped. It
// holds no timings, so that the same inputs give the same file.
type Collection struct {
	Dataset   string            `json:"dataset"`
	Seed      uint64            `json:"seed"`
	Repos     []*CollectionRepo `json:"repositories"`
	Instances int               `json:"instances"`
	Splits    map[string]int    `json:"splits,omitempty"`
}

// CollectionRepo is one repository's collection.
type CollectionRepo struct {
	Repository string           `json:"repository"`
	TestFiles  int              `json:"test_files"` // discovered
	Passing    int              `json:"passing"`    // pass fully on the complete project
	Candidates int              `json:"candidates"` // fail-to-pass candidates
	Traced     int              `json:"traced"`
	Classified int              `json:"classified"` // with tested top-level objects
	WithP2P    int              `json:"with_p2p"`   // with pass-to-pass files
	Masked     int              `json:"masked"`     // instances masked, both levels counted
	Verified   int              `json:"verified"`   // instances that passed post-verification
	Kept       int              `json:"kept"`       // instances in the dataset, after the full-set filters
	Drops      []CollectionDrop `json:"drops"`
	// Failure is why the repository stopped before the end, when it did:
	// its counts are then as far as it got, and it gave no instance.
	Failure *CollectionFailure `json:"failure,omitempty"`
	// Method is how the repository was collected (Method*); empty reads
	// as MethodTestDriven, whose counts are the fields above. The
	// history-based methods count their own steps in Funnel instead, in
	// order (releases, changelog entries, pull requests, each filter,
	// verified, kept).
	Method string           `json:"method,omitempty"`
	Funnel []CollectionStep `json:"funnel,omitempty"`
}

// CollectionStep is one step of a history-based method's funnel: what is
// counted, and how many got there.
type CollectionStep struct {
	Step  string `json:"step"`
	Count int    `json:"count"`
}

// MethodOrDefault is the repository's collection method, MethodTestDriven
// when the file does not say.
func (r *CollectionRepo) MethodOrDefault() string {
	if r.Method == "" {
		return MethodTestDriven
	}
	return r.Method
}

// CollectionFailure is the stage a repository failed at, and why, in one
// line.
type CollectionFailure struct {
	Stage  string `json:"stage"`
	Reason string `json:"reason"`
}

// CollectionDrop is a candidate test file, or one level of its instances,
// that did not make it, and why.
type CollectionDrop struct {
	File   string `json:"file"`
	Level  int    `json:"level,omitempty"` // 0: the candidate, every level
	Stage  string `json:"stage"`
	Reason string `json:"reason"`
	// Pull is the pull request a history-based method dropped (File is
	// then empty).
	Pull int `json:"pull,omitempty"`
}

// Subject is what a drop dropped, as a person reads it: the test file, or
// the pull request.
func (d CollectionDrop) Subject() string {
	if d.Pull > 0 && d.File == "" {
		return fmt.Sprintf("#%d", d.Pull)
	}
	return d.File
}

// decodeCollection reads and checks collection.json: strict JSON, known
// fields, non-negative counts, bounded text.
func decodeCollection(path string, raw []byte) (*Collection, Problems) {
	var ps Problems
	var c Collection
	if err := jsonv2.Unmarshal(raw, &c, jsonv2.RejectUnknownMembers(true)); err != nil {
		ps.Add(path, 0, "", "%v", err)
		return nil, ps
	}
	text := func(field, s string) {
		switch {
		case len(s) > maxCollectionText:
			ps.Add(path, 0, field, "%s", checkBytes(len(s), maxCollectionText))
		case !utf8.ValidString(s):
			ps.Add(path, 0, field, "is not valid UTF-8")
		default:
			for _, r := range s {
				if badRune(r) {
					ps.Add(path, 0, field, "holds a control character %U", r)
					break
				}
			}
		}
	}
	count := func(field string, n int) {
		if n < 0 {
			ps.Add(path, 0, field, "is %d; it cannot be negative", n)
		}
	}
	text("dataset", c.Dataset)
	count("instances", c.Instances)
	for k, v := range c.Splits {
		text("splits", k)
		count("splits."+k, v)
	}
	if len(c.Repos) > maxCollectionList {
		ps.Add(path, 0, "repositories", "lists %d; at most %d", len(c.Repos), maxCollectionList)
		return nil, ps
	}
	drops := 0
	seen := map[[2]string]int{}
	for i, r := range c.Repos {
		f := fmt.Sprintf("repositories[%d]", i)
		if r == nil {
			ps.Add(path, 0, f, "is null")
			continue
		}
		text(f+".repository", r.Repository)
		// A repository is reported once per method: a second report would
		// be shown as its funnel too.
		if j, ok := seen[[2]string{r.Repository, r.MethodOrDefault()}]; ok {
			ps.Add(path, 0, f, "reports %s by method %s again (repositories[%d] did)", r.Repository, r.MethodOrDefault(), j)
		} else {
			seen[[2]string{r.Repository, r.MethodOrDefault()}] = i
		}
		for _, n := range []struct {
			k string
			v int
		}{{"test_files", r.TestFiles}, {"passing", r.Passing}, {"candidates", r.Candidates}, {"traced", r.Traced},
			{"classified", r.Classified}, {"with_p2p", r.WithP2P}, {"masked", r.Masked}, {"verified", r.Verified}, {"kept", r.Kept}} {
			count(f+"."+n.k, n.v)
		}
		if r.Method != "" && !slices.Contains(Methods, r.Method) {
			ps.Add(path, 0, f+".method", "is %q; want one of %s", r.Method, strings.Join(Methods, ", "))
		}
		if len(r.Funnel) > 1_000 {
			ps.Add(path, 0, f+".funnel", "lists %d steps; at most 1000", len(r.Funnel))
			return nil, ps
		}
		for j, st := range r.Funnel {
			text(fmt.Sprintf("%s.funnel[%d].step", f, j), st.Step)
			count(fmt.Sprintf("%s.funnel[%d].count", f, j), st.Count)
		}
		if fl := r.Failure; fl != nil {
			text(f+".failure.stage", fl.Stage)
			text(f+".failure.reason", fl.Reason)
			if fl.Stage == "" {
				ps.Add(path, 0, f+".failure.stage", "is empty; want the stage the repository failed at")
			}
		}
		drops += len(r.Drops)
		if drops > maxCollectionList {
			ps.Add(path, 0, f+".drops", "more than %d drops in all", maxCollectionList)
			return nil, ps
		}
		for j, d := range r.Drops {
			g := fmt.Sprintf("%s.drops[%d]", f, j)
			text(g+".file", d.File)
			text(g+".stage", d.Stage)
			text(g+".reason", d.Reason)
			if d.Level < 0 || d.Level > 2 {
				ps.Add(path, 0, g+".level", "is %d; want 0 (every level), 1 or 2", d.Level)
			}
			if d.Pull < 0 || d.Pull > maxPullNumber {
				ps.Add(path, 0, g+".pull", "is %d; want a pull request number from 1 to %d", d.Pull, maxPullNumber)
			}
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return &c, nil
}
