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
	"sync"

	"github.com/a-h/templ"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/templates"
)

// instancePage is an instance's page: its key, and the page's rendering.
// Rendering is most of a build's work, and a page whose key is the last
// build's is not rendered again (output.reuseKeyed). The key hashes the
// program's key, the instance as published (every field the page derives
// from it, statement and patches included) and the rest of the page's
// view, which comes from beyond the instance (the site, the systems'
// results on it, its difficulty).
func (b *builder) instancePage(ds *bench.Dataset, in *bench.Instance) (uint64, func() (templ.Component, []byte, error), error) {
	p := b.instanceShared(ds, in)
	raw, err := in.JSON()
	if err != nil {
		return 0, nil, fmt.Errorf("instance %s: %w", in.InstanceID, err)
	}
	key, err := viewKey(b.key, p, raw)
	if err != nil {
		key = 0 // no key: rendered every time
	}
	return key, func() (templ.Component, []byte, error) {
		b.instanceOwn(p, in)
		var err error
		if p.Statement, err = b.mk.Markdown(in.ProblemStatement); err != nil {
			return nil, nil, fmt.Errorf("instance %s: %w", in.InstanceID, err)
		}
		// The files too: one reading of each patch.
		if in.Patch != "" {
			p.Patch, p.PatchFiles = b.mk.DiffAndFiles(in.Patch)
		}
		if in.TestPatch != "" {
			p.TestPatch, p.TestFiles = b.mk.DiffAndFiles(in.TestPatch)
		}
		return afterRender(templates.InstancePageView(p), func() { b.rows.systems.put(p.Systems) }), nil, nil
	}, nil
}

// instanceShared is the part of an instance page's view that comes from
// beyond the instance.
func (b *builder) instanceShared(ds *bench.Dataset, in *bench.Instance) *templates.InstancePage {
	f := b.facts(ds)
	p := &templates.InstancePage{
		Page: b.frame(b.m.u.instance(ds, in.InstanceID), ds, in.InstanceID, fmt.Sprintf("Task instance %s of %s (%s).", in.InstanceID, ds.DisplayName(), in.Repo),
			templates.Link{Title: "Home", URL: b.m.u.base},
			templates.Link{Title: ds.DisplayName(), URL: b.m.u.dataset(ds)},
			templates.Link{Title: in.InstanceID}),
		Dataset: ds.DisplayName(), DatasetURL: b.m.u.dataset(ds),
		Splits:     strings.Join(f.splits[in.InstanceID], ", "),
		Difficulty: f.difficulty(in.InstanceID),
		Unsolved:   f.solved(in.InstanceID).Unsolved(),
	}
	if r := ds.Repository(in.Repo); r != nil && r.URL != "" {
		p.RepoURL = r.URL
	}
	n := 0
	for _, bd := range b.m.boards {
		if bd.ds == ds && bd.has(in) {
			n += len(bd.entries)
		}
	}
	p.Systems = b.rows.systems.get(n)
	for _, bd := range b.m.boards {
		if bd.ds != ds || !bd.has(in) {
			continue
		}
		for _, e := range bd.entries {
			if !e.sub.PerInstance() {
				continue
			}
			sys := templates.InstanceSystem{Name: e.sub.Name, Lead: b.systemLead(bd, e), Split: bd.split, Reference: e.ref(),
				Trajectories: b.trajectoryLinks(e.sub, in.InstanceID)}
			r := e.sub.ResultOf(in)
			if r == nil {
				sys.NoPrediction = true
			} else {
				// Thousands of pages times every system: no fmt here.
				sys.Resolved, sys.Applied, sys.Empty = r.Resolved, r.PatchApplied, emptyPrediction(r)
				sys.Passed, sys.Of = len(r.F2PPassed), len(in.FailToPass)
				sys.Failures = failures(r, sys.Empty)
				sys.Flags = flagViews(r)
			}
			p.Systems = append(p.Systems, sys)
		}
	}
	lists := make([][]templates.Flag, 0, len(p.Systems))
	for _, s := range p.Systems {
		lists = append(lists, s.Flags)
	}
	p.FlagLegend = flagLegend(lists...)
	return p
}

// instanceOwn fills in the part of an instance page's view that comes
// from the instance alone (and instanceShared's part), but for the HTML
// of its statement and patches and the files they touch.
func (b *builder) instanceOwn(p *templates.InstancePage, in *bench.Instance) {
	p.ID, p.Repo, p.Level, p.BaseCommit, p.ImageName, p.Created = in.InstanceID, in.Repo, in.Level, in.BaseCommit, in.ImageName, in.CreatedAt
	p.PatchFiles, p.TestFiles = nil, nil // from the patches' rendering
	p.FailToPass, p.PassToPass, p.TopObjects = in.FailToPass, in.PassToPass, in.TopObjects
	p.Stats = []templates.Stat{
		{Label: "Lines", Value: intCell(in.Lines)}, {Label: "Files", Value: intCell(in.Files)},
		{Label: "Functions", Value: intCell(in.Functions)},
		{Label: "F2P test points", Value: intCell(in.F2PTestPoints)}, {Label: "P2P test points", Value: intCell(in.P2PTestPoints)},
	}
	if p.RepoURL != "" {
		p.CommitURL = commitURL(p.RepoURL, in.BaseCommit)
	}
	p.Settings, p.RepoSettings = settings(in.RepoSettings)
	p.Method, p.PullNumber, p.Release = in.MethodOrDefault(), in.PullNumber, in.Release
	if p.RepoURL != "" && in.PullNumber > 0 {
		p.PullURL = pullURL(p.RepoURL, in.PullNumber)
	}
	p.Components = p.Components[:0]
	for _, c := range in.Components {
		p.Components = append(p.Components, templates.Component{File: c.File, Name: c.Name, Kind: c.Kind, Signature: c.Signature, Docstring: c.Docstring})
	}
	p.Canaries, p.GoldAudit = canaryText(in), nil
	for _, k := range in.GoldAudit {
		p.GoldAudit = append(p.GoldAudit, templates.Flag{Name: auditPrefix + k, Explanation: bench.AuditExplanation(k)})
	}
}

// pullURL links a pull request on GitHub (the forge whose pull request
// numbers the history methods read), or returns "".
func pullURL(repoURL string, n int) string {
	u, err := url.Parse(repoURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || strings.ToLower(u.Host) != "github.com" {
		return ""
	}
	return strings.TrimSuffix(strings.TrimSuffix(repoURL, "/"), ".git") + "/pull/" + strconv.Itoa(n)
}

// canaryText says where grading adds canaries to an instance, or "".
func canaryText(in *bench.Instance) string {
	if len(in.Canaries) == 0 {
		return ""
	}
	tests := map[string]bool{}
	for _, c := range in.Canaries {
		tests[c.Test] = true
	}
	places := "places"
	if len(in.Canaries) == 1 {
		places = "place"
	}
	return "Grading adds canary tests at places drawn afresh for every evaluation among " +
		strconv.Itoa(len(in.Canaries)) + " " + places + " in " + strconv.Itoa(len(tests)) + " of the fail-to-pass test functions: " +
		"copies of a test that expect another value (a correct implementation fails them; collection checked that the gold patch does), under fresh names, as are the tests themselves. " +
		"A prediction that passes a canary beside the test it copies read the expected values out of the tests, or forged the report, and is graded as tampering."
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

// rowLeads are the first cells of the rows pages hold by the hundred
// thousand, made once and shared: each instance's on the system pages
// (by dataset and split, in SplitInstances' order), each system's on the
// instance pages (by board entry). Pages render concurrently.
type rowLeads struct {
	mu       sync.Mutex
	outcomes map[outcomeKey][]templates.HTML
	systems  map[*entry]templates.HTML
}

type outcomeKey struct {
	ds    *bench.Dataset
	split string
}

// outcomeLeads are the system pages' row leads of a split's instances.
func (b *builder) outcomeLeads(ds *bench.Dataset, split string) []templates.HTML {
	k := outcomeKey{ds, split}
	b.leads.mu.Lock()
	defer b.leads.mu.Unlock()
	if l, ok := b.leads.outcomes[k]; ok {
		return l
	}
	ins := ds.SplitInstances(split)
	l := make([]templates.HTML, len(ins))
	for i, in := range ins {
		l[i] = templates.OutcomeLead(in.InstanceID, b.m.u.instance(ds, in.InstanceID), in.Repo, in.Level)
	}
	if b.leads.outcomes == nil {
		b.leads.outcomes = map[outcomeKey][]templates.HTML{}
	}
	b.leads.outcomes[k] = l
	return l
}

// systemLead is the instance pages' row lead of a board's entry.
func (b *builder) systemLead(bd *board, e *entry) templates.HTML {
	b.leads.mu.Lock()
	defer b.leads.mu.Unlock()
	if l, ok := b.leads.systems[e]; ok {
		return l
	}
	l := templates.SystemLead(e.sub.Name, e.row.URL, bd.split, e.ref())
	if b.leads.systems == nil {
		b.leads.systems = map[*entry]templates.HTML{}
	}
	b.leads.systems[e] = l
	return l
}
