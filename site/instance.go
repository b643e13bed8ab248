package site

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/templates"
)

func (b *builder) instancePage(ds *bench.Dataset, in *bench.Instance) (templ.Component, error) {
	statement, err := b.mk.Markdown(in.ProblemStatement)
	if err != nil {
		return nil, fmt.Errorf("instance %s: %w", in.InstanceID, err)
	}
	var patch, testPatch string
	if in.Patch != "" {
		patch = b.mk.Diff(in.Patch)
	}
	if in.TestPatch != "" {
		testPatch = b.mk.Diff(in.TestPatch)
	}
	f := b.facts(ds)
	p := &templates.InstancePage{
		Page: b.frame(b.m.u.instance(ds, in.InstanceID), ds, in.InstanceID, fmt.Sprintf("Task instance %s of %s (%s).", in.InstanceID, ds.DisplayName(), in.Repo),
			templates.Link{Title: "Home", URL: b.m.u.base},
			templates.Link{Title: ds.DisplayName(), URL: b.m.u.dataset(ds)},
			templates.Link{Title: in.InstanceID}),
		ID: in.InstanceID, Dataset: ds.DisplayName(), DatasetURL: b.m.u.dataset(ds),
		Repo: in.Repo, Level: in.Level, BaseCommit: in.BaseCommit, ImageName: in.ImageName,
		Created: in.CreatedAt, Splits: strings.Join(f.splits[in.InstanceID], ", "),
		Statement: statement, Patch: patch, TestPatch: testPatch,
		PatchFiles: DiffFiles(in.Patch), TestFiles: DiffFiles(in.TestPatch),
		FailToPass: in.FailToPass, PassToPass: in.PassToPass, TopObjects: in.TopObjects,
		Difficulty: f.difficulty(in.InstanceID),
		Stats: []templates.Stat{
			{Label: "Lines", Value: intCell(in.Lines)}, {Label: "Files", Value: intCell(in.Files)},
			{Label: "Functions", Value: intCell(in.Functions)},
			{Label: "F2P test points", Value: intCell(in.F2PTestPoints)}, {Label: "P2P test points", Value: intCell(in.P2PTestPoints)},
		},
	}
	if r := ds.Repository(in.Repo); r != nil && r.URL != "" {
		p.RepoURL = r.URL
		p.CommitURL = commitURL(r.URL, in.BaseCommit)
	}
	p.Settings, p.RepoSettings = settings(in.RepoSettings)
	for _, bd := range b.m.boards {
		if bd.ds != ds || !bd.has(in) {
			continue
		}
		for _, e := range bd.entries {
			if !e.sub.PerInstance() {
				continue
			}
			sys := templates.InstanceSystem{Name: e.sub.Name, URL: e.row.URL, Split: bd.split, Reference: e.ref()}
			r := e.sub.ResultOf(in)
			if r == nil {
				sys.NoPrediction = true
			} else {
				// Thousands of pages times every system: no fmt here.
				sys.Resolved, sys.Applied = r.Resolved, r.PatchApplied
				sys.Passed = strconv.Itoa(len(r.F2PPassed)) + " of " + strconv.Itoa(len(in.FailToPass))
				sys.Failures = strings.Join(r.FailureModes, ", ")
			}
			p.Systems = append(p.Systems, sys)
		}
	}
	return templates.InstancePageView(p), nil
}

// has reports whether the board's split holds the instance.
func (bd *board) has(in *bench.Instance) bool { return bd.ds.InSplit(bd.split, in) }

// hexCommit is what a commit id looks like; anything else is not linked.
var hexCommit = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)

// commitURL links a commit on the forges whose commit URLs are known, or
// returns "".
func commitURL(repoURL, commit string) string {
	if !hexCommit.MatchString(commit) {
		return ""
	}
	u, err := url.Parse(repoURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return ""
	}
	base := strings.TrimSuffix(strings.TrimSuffix(repoURL, "/"), ".git")
	switch strings.ToLower(u.Host) {
	case "github.com", "codeberg.org", "bitbucket.org":
		if strings.ToLower(u.Host) == "bitbucket.org" {
			return base + "/commits/" + commit
		}
		return base + "/commit/" + commit
	case "gitlab.com":
		return base + "/-/commit/" + commit
	}
	return ""
}

// settings makes repo_settings readable: a JSON object key by key (strings
// and numbers as they are, lists and objects indented), else the whole
// value indented.
func settings(raw json.RawMessage) ([]templates.Setting, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ""
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || len(obj) == 0 {
		var buf bytes.Buffer
		if json.Indent(&buf, raw, "", "  ") != nil {
			return nil, string(raw)
		}
		return nil, buf.String()
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]templates.Setting, 0, len(keys))
	for _, k := range keys {
		v := bytes.TrimSpace(obj[k])
		st := templates.Setting{Key: k}
		var str string
		switch {
		case json.Unmarshal(v, &str) == nil:
			st.Value = str
		case len(v) > 0 && (v[0] == '{' || v[0] == '['):
			var buf bytes.Buffer
			if json.Indent(&buf, v, "", "  ") == nil {
				st.Value = buf.String()
			} else {
				st.Value = string(v)
			}
			st.Code = true
		default:
			st.Value = string(v)
		}
		out = append(out, st)
	}
	return out, ""
}
