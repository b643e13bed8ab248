package bench

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/featbench/featbench/internal/tomlstrict"
	jsonv2 "github.com/go-json-experiment/json"
	"golang.org/x/sync/errgroup"
)

// checkedKeyMsg answers a `checked` key in metadata.toml.
const checkedKeyMsg = "a submission cannot mark itself checked: attestations are the maintainers' and live in data/" + CheckedFile

// loadSubmissions loads every submission folder of the tree. It also
// returns the OrgKey of every organisation a metadata.toml names, for
// the logos.
func loadSubmissions(ctx context.Context, t *tree, data *Data, broken map[string]bool) ([]*Submission, map[string]bool, Problems) {
	var (
		mu   sync.Mutex
		ps   Problems
		subs []*Submission
		orgs = map[string]bool{}
	)
	// Results files are read into reused buffers: together they are most
	// of the bytes under data/, and nothing decoded keeps them.
	bufs := sync.Pool{New: func() any { return new([]byte) }}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, f := range t.submissions {
		if f.bad {
			continue // the problem is listed already
		}
		g.Go(func() error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			buf := bufs.Get().(*[]byte)
			defer bufs.Put(buf)
			s, sorgs, sps := loadSubmission(f, data, broken, buf)
			mu.Lock()
			defer mu.Unlock()
			ps = append(ps, sps...)
			if s != nil {
				subs = append(subs, s)
			}
			for _, o := range sorgs {
				orgs[OrgKey(o)] = true
			}
			return nil
		})
	}
	_ = g.Wait()
	sort.Slice(subs, func(i, j int) bool { return subs[i].ID() < subs[j].ID() })
	return subs, orgs, ps
}

// loadSubmission loads one submission folder; buf is scratch space for
// its results file. It returns the organisations its metadata names even
// when the submission has problems.
func loadSubmission(f *folder, data *Data, broken map[string]bool, buf *[]byte) (*Submission, []string, Problems) {
	var ps Problems
	dir := f.path
	parts := strings.Split(f.rel, "/")
	name, version, split, folderName := parts[1], parts[2], parts[3], parts[4]
	mf := filepath.Join(dir, MetadataFile)

	ds := data.Dataset(name + "/" + version)
	if ds == nil {
		if broken[name+"/"+version] {
			ps.Add(dir, 0, "", "not checked: dataset %s/%s has problems (listed above)", name, version)
		} else {
			ps.Add(dir, 0, "", "no dataset %s/%s under data/datasets/ for this submission", name, version)
		}
		return nil, nil, ps
	}
	if ds.Split(split) == nil {
		ps.Add(dir, 0, "", "unknown split %q: %s has splits %s", split, ds.DisplayName(), strings.Join(splitNames(ds), ", "))
		return nil, nil, ps
	}
	m := folderPattern.FindStringSubmatch(folderName)
	if m == nil {
		ps.Add(dir, 0, "", "folder name %q must be <YYYYMMDD>_<slug>", folderName)
		return nil, nil, ps
	}
	folderDate, err := time.Parse("20060102", m[1])
	if err != nil {
		ps.Add(dir, 0, "", "folder name %q: %s is not a date", folderName, m[1])
	}
	if err := CheckName(m[2]); err != nil {
		ps.Add(dir, 0, "", "slug %v", err)
	}

	s := &Submission{Dataset: ds, Split: split, Folder: folderName, Slug: m[2], Dir: dir}
	if f.file(MetadataFile) == nil {
		ps.Add(mf, 0, "", "cannot read: the file is missing (a submission folder needs %s)", MetadataFile)
		return nil, nil, ps
	}
	raw, err := readFile(mf, maxMetadataFile, nil)
	if err != nil {
		return nil, nil, append(ps, readProblem(mf, err))
	}
	kl, mps := decodeTOML(mf, raw, &s.Metadata, map[string]string{"checked": checkedKeyMsg})
	if len(mps) > 0 {
		return nil, nil, append(ps, mps...)
	}
	s.metaLines = kl
	orgs := s.Organisations
	ps = validateMetadata(mf, kl, &s.Metadata, folderDate, ds, ps)

	rf := filepath.Join(dir, ResultsFile)
	switch {
	case f.file(ResultsFile) != nil:
		if s.Reported != nil {
			kl.Add(&ps, mf, "reported", "a submission has either %s or a [reported] block, not both", ResultsFile)
			break
		}
		raw, err := readFile(rf, maxResultsFile, buf)
		if err != nil {
			ps = append(ps, readProblem(rf, err))
			break
		}
		s.Results, ps = readResults(rf, raw, ds, split, data, ps)
		ps = checkGoldCopies(s, ps)
	case s.Reported == nil:
		ps.Add(dir, 0, "", "needs %s with per-instance results, or a [reported] block in %s", ResultsFile, MetadataFile)
	}
	if f.file(PredictionsFile) != nil {
		pf := filepath.Join(dir, PredictionsFile)
		if raw, err := readFile(pf, maxPredictionsFile, nil); err != nil {
			ps = append(ps, readProblem(pf, err))
		} else {
			ps = readPredictions(pf, raw, ds, split, ps)
		}
	}
	for _, name := range []string{LogsFile, TrajectoriesFile} {
		if f.file(name) == nil {
			continue
		}
		n := len(ps)
		ps = checkArchive(filepath.Join(dir, name), ps)
		if name == TrajectoriesFile && len(ps) == n {
			// The site makes a page of each trajectory: its entries are
			// listed and checked here, where every problem of data/ is.
			s.Trajectories, ps = indexTrajectories(filepath.Join(dir, name), ds, split, s.Attempts, ps)
		}
	}
	for _, n := range f.names {
		e := f.files[n]
		s.Files = append(s.Files, SubmissionFile{Name: e.name, Path: e.path, Size: e.size})
	}
	if len(ps) > 0 {
		return nil, orgs, ps
	}
	s.index()
	return s, orgs, nil
}

func splitNames(ds *Dataset) []string {
	var out []string
	for _, s := range ds.Splits {
		out = append(out, s.Name)
	}
	return out
}

func validateMetadata(mf string, kl keyLines, m *Metadata, folderDate time.Time, ds *Dataset, ps Problems) Problems {
	bad := func(field, format string, args ...any) { kl.Add(&ps, mf, field, format, args...) }
	text := func(field, s string, max int, kind textKind) {
		if msg := checkText(s, max, kind); msg != "" {
			bad(field, "%s", msg)
		}
	}
	for _, f := range []struct{ field, v string }{{"name", m.Name}, {"scaffold", m.Scaffold}, {"model", m.Model}} {
		if strings.TrimSpace(f.v) == "" {
			bad(f.field, "is required")
		}
		text(f.field, f.v, maxSystemText, oneLine)
	}
	list := func(field string, items []string, maxItems, maxEach int) {
		if len(items) > maxItems {
			bad(field, "lists %d; at most %d", len(items), maxItems)
			return
		}
		for i, it := range items {
			f := fmt.Sprintf("%s[%d]", field, i)
			if strings.TrimSpace(it) == "" {
				bad(f, "is empty")
			}
			text(f, it, maxEach, oneLine)
		}
	}
	list("organisations", m.Organisations, maxOrganisations, maxOrganisation)
	list("tags", m.Tags, maxTags, maxTag)
	text("notes", m.Notes, maxNotes, multiLine)
	if m.Date.IsZero() {
		bad("date", "is required (a date such as 2026-01-21)")
	} else if !folderDate.IsZero() && m.Date.Format("20060102") != folderDate.Format("20060102") {
		bad("date", "is %s but the folder name says %s", m.Date.Format("2006-01-02"), folderDate.Format("2006-01-02"))
	}
	for _, f := range []struct{ field, v string }{
		{"site_url", m.SiteURL}, {"report_url", m.ReportURL}, {"logs_url", m.LogsURL},
		{"trajectories_url", m.TrajectoriesURL}, {"predictions_url", m.PredictionsURL},
	} {
		if f.v != "" {
			if err := CheckURL(f.v); err != nil {
				bad(f.field, "%v", err)
			}
		}
	}
	if m.Attempts == 0 {
		m.Attempts = 1
	} else if m.Attempts < 1 || m.Attempts > maxAttempts {
		bad("attempts", "is %d; want 1 to %d", m.Attempts, maxAttempts)
	}
	if r := m.Reported; r != nil {
		text("reported.source", r.Source, maxSource, oneLine)
		if !r.Resolved.Set() {
			bad("reported.resolved", "is required in a [reported] block")
		}
		checkFigure(&ps, mf, kl, "reported.resolved", r.Resolved, 0, 100)
		checkFigure(&ps, mf, kl, "reported.passed", r.Passed, 0, 100)
		checkFigure(&ps, mf, kl, "reported.tokens_in", r.TokensIn, 0, maxCount)
		checkFigure(&ps, mf, kl, "reported.tokens_out", r.TokensOut, 0, maxCount)
		checkFigure(&ps, mf, kl, "reported.cost", r.Cost, 0, maxCost)
		score := func(field string, sc *Score) {
			if sc == nil {
				return
			}
			text(field+".source", sc.Source, maxSource, oneLine)
			checkFigure(&ps, mf, kl, field+".resolved", sc.Resolved, 0, 100)
			checkFigure(&ps, mf, kl, field+".passed", sc.Passed, 0, 100)
			checkFigure(&ps, mf, kl, field+".tokens_in", sc.TokensIn, 0, maxCount)
			checkFigure(&ps, mf, kl, field+".tokens_out", sc.TokensOut, 0, maxCount)
		}
		for _, lvl := range slices.Sorted(maps.Keys(r.Levels)) {
			if lvl != "L1" && lvl != "L2" {
				bad("reported.levels."+lvl, "unknown level; want L1 or L2")
				continue
			}
			score("reported.levels."+lvl, r.Levels[lvl])
		}
		for _, repo := range slices.Sorted(maps.Keys(r.Repos)) {
			if ds.Repository(repo) == nil {
				bad("reported.repos."+repo, "repository %s is not listed in %s", tomlstrict.Quote(repo), ds.Key())
				continue
			}
			score("reported.repos."+repo, r.Repos[repo])
		}
	}
	return ps
}

func readResults(path string, raw []byte, ds *Dataset, split string, data *Data, ps Problems) ([]Result, Problems) {
	if !ds.HasInstances() {
		ps.Add(path, 0, "", "per-instance results need the instances of %s, which are not in data/", ds.DisplayName())
		return nil, ps
	}
	if bytes.HasPrefix(raw, []byte(utf8BOM)) {
		return nil, append(ps, bomProblem(path))
	}
	member := ds.Split(split).member
	order := ds.SplitInstances(split)
	decoded, ok := scanResults(raw, ds.interner(order))
	if !ok {
		decoded, ok = decodeResults(raw, ds.interner(order))
	}
	if !ok {
		// The lines that do decode are still checked below, so that one
		// run lists every problem.
		decoded, ps = decodeResultLines(path, raw, ps)
	}
	if len(decoded) == 0 && len(trimJSONSpace(raw)) == 0 {
		ps.Add(path, 0, "", "holds no results; a submission without per-instance results leaves out %s and gives a [reported] block in %s", ResultsFile, MetadataFile)
		return nil, ps
	}
	out := decoded[:0]
	seen := make([]int, len(ds.Instances)) // by instance position: the line of its result
	for _, res := range decoded {
		line := res.Line
		if res.Dataset != "" && res.Dataset != ds.Key() {
			ps.Add(path, line, "dataset", "result is for %s but the folder is for %s", tomlstrict.Quote(res.Dataset), ds.Key())
			continue
		}
		in := res.inst // the interner's, on the scanner's path
		if in == nil {
			in = ds.Instance(res.InstanceID)
		}
		if in == nil {
			msg := fmt.Sprintf("unknown instance id %s in %s", tomlstrict.Quote(res.InstanceID), ds.DisplayName())
			for _, other := range data.Datasets {
				if other != ds && other.Name == ds.Name && other.Instance(res.InstanceID) != nil {
					msg += fmt.Sprintf("; it belongs to %s: results for another dataset version", other.DisplayName())
					break
				}
			}
			ps.Add(path, line, "instance_id", "%s", msg)
			continue
		}
		if !member[in.pos] {
			ps.Add(path, line, "instance_id", "instance %q is not in split %q", res.InstanceID, split)
			continue
		}
		if first := seen[in.pos]; first > 0 {
			ps.Add(path, line, "instance_id", "duplicate result for %q (first on line %d)", res.InstanceID, first)
			continue
		}
		seen[in.pos] = line
		ps = checkResult(path, line, &res, in, ps)
		res.inst = in
		out = append(out, res)
	}
	return out, ps
}

// decodeResultLines decodes line by line, naming the line and field of
// every problem. It is as strict as the fast path: exact keys, each
// once, valid UTF-8, one object per line.
func decodeResultLines(path string, raw []byte, ps Problems) ([]Result, Problems) {
	var out []Result
	eachLine(raw, func(line int, b []byte) {
		v, err := readObjectLine(b)
		var res Result
		if err == nil {
			err = jsonv2.Unmarshal(v, &res, jsonv2.RejectUnknownMembers(true))
		}
		if err != nil {
			ps = append(ps, jsonProblem(path, line, err))
			return
		}
		res.Line = line
		out = append(out, res)
	})
	return out, ps
}

// checkResult checks a result's tests against its instance and that its
// resolved flag agrees with them: resolved means the patch applied and every
// FAIL_TO_PASS and PASS_TO_PASS test passed.
func checkResult(path string, line int, res *Result, in *Instance, ps Problems) Problems {
	// outcome[k] records which list named test k of the instance (F2P
	// tests first, then P2P), so a test is listed once, as passed or
	// failed. This runs for every result: no maps, no string copies.
	nf := len(in.FailToPass)
	var small [128]uint8
	var outcome []uint8
	if n := nf + len(in.PassToPass); n > len(small) {
		outcome = make([]uint8, n)
	} else {
		outcome = small[:n]
	}
	lists := [...]struct {
		field string
		ids   []string
		p2p   bool
	}{
		{"f2p_passed", res.F2PPassed, false},
		{"f2p_failed", res.F2PFailed, false},
		{"p2p_passed", res.P2PPassed, true},
		{"p2p_failed", res.P2PFailed, true},
	}
	bad := false
	// Results list tests in the instance's order: the test after the
	// last one found is compared before the index is looked up (a
	// million look-ups a small build), while the index holds every test
	// once, so that either way k is the index's.
	guess := len(in.testIndex) == len(outcome)
	for li, c := range lists {
		tests, name, off := in.FailToPass, "FAIL_TO_PASS", 0
		if c.p2p {
			tests, name, off = in.PassToPass, "PASS_TO_PASS", nf
		}
		j := 0 // the next test of the list, by guess
		for i, id := range c.ids {
			k, ok := 0, false
			if guess && j < len(tests) && tests[j] == id {
				k, ok = off+j, true
			} else {
				k, ok = in.testIndex[id]
			}
			j = k - off + 1
			if !ok || k < off || k >= off+len(tests) {
				ps.Add(path, line, c.field, "test %s is not in the instance's %s", tomlstrict.Quote(id), name)
				bad = true
				break
			}
			if prev := outcome[k]; prev != 0 {
				ps.Add(path, line, c.field, "test %q is also listed in %s", id, lists[prev-1].field)
				bad = true
				break
			}
			outcome[k] = uint8(li + 1)
			c.ids[i] = tests[k-off] // share the instance's copy of the id
		}
	}
	all := !bad && res.PatchApplied && len(res.F2PFailed) == 0 && len(res.P2PFailed) == 0 &&
		len(res.F2PPassed) == nf && len(res.P2PPassed) == len(in.PassToPass)
	if res.Resolved && !all {
		ps.Add(path, line, "resolved", "is true but not every FAIL_TO_PASS and PASS_TO_PASS test passed with the patch applied")
	}
	if !res.Resolved && all {
		ps.Add(path, line, "resolved", "is false but the patch applied and every test passed")
	}
	if res.FilesChanged < 0 {
		ps.Add(path, line, "files_changed", "is %d; it cannot be negative", res.FilesChanged)
	}
	ps = checkEvalFields(path, line, res, ps)
	ps = checkAttemptsPassed(path, line, res, nf, ps)
	ps = checkFlags(path, line, res, ps)
	ps = checkAudit(path, line, res, ps)
	for _, v := range []struct {
		field string
		p     *int64
	}{{"tokens_in", res.TokensIn}, {"tokens_out", res.TokensOut}, {"turns", res.Turns}} {
		if v.p != nil {
			if msg := checkRange(float64(*v.p), 0, maxCount); msg != "" {
				ps.Add(path, line, v.field, "is %d; %s", *v.p, msg)
			}
		}
	}
	if res.Measured && (res.TokensIn == nil || res.TokensOut == nil) {
		ps.Add(path, line, "measured", "is true but tokens_in or tokens_out is missing: measured figures are counts the harness made")
	}
	if res.Cost != nil {
		if msg := checkRange(*res.Cost, 0, maxCost); msg != "" {
			ps.Add(path, line, "cost", "is %s; %s", num(*res.Cost), msg)
		}
	}
	if len(res.FailureModes) > maxFailureModes {
		ps.Add(path, line, "failure_modes", "lists %d; at most %d", len(res.FailureModes), maxFailureModes)
	} else {
		for i, fm := range res.FailureModes {
			msg := checkText(fm, maxFailureMode, oneLine)
			if strings.TrimSpace(fm) == "" {
				msg = "is empty"
			}
			if msg != "" {
				ps.Add(path, line, fmt.Sprintf("failure_modes[%d]", i), "%s", msg)
				break
			}
		}
	}
	return ps
}

// readPredictions checks predictions.jsonl: one JSON object per line, as
// strict as results, each with the instance_id of an instance of the
// split, once. Its other fields (model_patch, model_name_or_path, ...)
// are published as they are and not read.
func readPredictions(path string, raw []byte, ds *Dataset, split string, ps Problems) Problems {
	if !ds.HasInstances() {
		ps.Add(path, 0, "", "predictions need the instances of %s, which are not in data/", ds.DisplayName())
		return ps
	}
	if bytes.HasPrefix(raw, []byte(utf8BOM)) {
		return append(ps, bomProblem(path))
	}
	member := ds.Split(split).member
	seen := make([]int, len(ds.Instances))
	n := 0
	eachLine(raw, func(line int, b []byte) {
		n++
		if len(b) > maxInstanceLine {
			ps.Add(path, line, "", "the line is %d bytes; a prediction is at most %d", len(b), maxInstanceLine)
			return
		}
		v, err := readObjectLine(b)
		var p struct {
			InstanceID *string `json:"instance_id"`
		}
		if err == nil {
			err = jsonv2.Unmarshal(v, &p)
		}
		if err != nil {
			ps = append(ps, jsonProblem(path, line, err))
			return
		}
		if p.InstanceID == nil {
			ps.Add(path, line, "instance_id", "is required")
			return
		}
		in := ds.Instance(*p.InstanceID)
		switch {
		case in == nil:
			ps.Add(path, line, "instance_id", "unknown instance id %s in %s", tomlstrict.Quote(*p.InstanceID), ds.DisplayName())
		case !member[in.pos]:
			ps.Add(path, line, "instance_id", "instance %q is not in split %q", in.InstanceID, split)
		case seen[in.pos] > 0:
			ps.Add(path, line, "instance_id", "duplicate prediction for %q (first on line %d)", in.InstanceID, seen[in.pos])
		default:
			seen[in.pos] = line
		}
	})
	if n == 0 {
		ps.Add(path, 0, "", "holds no predictions; leave the file out instead")
	}
	return ps
}

// checkArchive checks that a logs or trajectories archive is a gzip file
// within its size limit. A logs archive is published as it is and never
// unpacked here; a trajectories archive is listed (indexTrajectories).
func checkArchive(path string, ps Problems) Problems {
	f, size, err := openRegular(path)
	if err != nil {
		return append(ps, readProblem(path, err))
	}
	defer f.Close()
	if size > maxArchiveFile {
		return append(ps, Problem{File: path, Msg: (&tooLarge{size, maxArchiveFile}).Error()})
	}
	var magic [3]byte
	if n, _ := f.Read(magic[:]); n < 3 || magic != [3]byte{0x1f, 0x8b, 8} {
		ps.Add(path, 0, "", "is not a gzip file: want a .tar.gz archive")
	}
	return ps
}

// checkSystems checks that submissions sharing a slug on one dataset
// version describe one system: the slug names the system's page, so a
// submission that took an existing slug would take over that page.
func checkSystems(subs []*Submission) Problems {
	var ps Problems
	first := map[string]*Submission{}
	for _, s := range subs {
		key := s.Dataset.Key() + "\x00" + s.Slug
		f := first[key]
		if f == nil {
			first[key] = s
			continue
		}
		for _, c := range []struct {
			field string
			a, b  string
			same  bool
		}{
			{"name", f.Name, s.Name, f.Name == s.Name},
			{"scaffold", f.Scaffold, s.Scaffold, f.Scaffold == s.Scaffold},
			{"model", f.Model, s.Model, f.Model == s.Model},
			{"organisations", fmt.Sprintf("%q", f.Organisations), fmt.Sprintf("%q", s.Organisations), slices.Equal(f.Organisations, s.Organisations)},
			{"site_url", f.SiteURL, s.SiteURL, f.SiteURL == s.SiteURL},
			{"report_url", f.ReportURL, s.ReportURL, f.ReportURL == s.ReportURL},
		} {
			if c.same {
				continue
			}
			mf := filepath.Join(s.Dir, MetadataFile)
			s.metaLines.Add(&ps, mf, c.field,
				"is %s but %s says %s: the slug %q names one system on every split of %s, so its name, scaffold, model, organisations, site_url and report_url must agree (use another slug for another system)",
				quoteField(c.b), filepath.Join(f.Dir, MetadataFile), quoteField(c.a), s.Slug, s.Dataset.Key())
		}
	}
	return ps
}

// quoteField quotes a string field, leaving a list as it is.
func quoteField(s string) string {
	if strings.HasPrefix(s, "[") {
		return s
	}
	return tomlstrict.Quote(s)
}

// checkEvalFields checks the fields cmd/eval adds to a result.
func checkEvalFields(path string, line int, res *Result, ps Problems) Problems {
	if m := res.ApplyMethod; m != "" {
		known := false
		for _, k := range ApplyMethods {
			known = known || m == k
		}
		switch {
		case !known:
			ps.Add(path, line, "apply_method", "is %s; want one of %s", tomlstrict.Quote(m), strings.Join(quoteAll(ApplyMethods), ", "))
		case !res.PatchApplied:
			ps.Add(path, line, "apply_method", "is %s but patch_applied is false", tomlstrict.Quote(m))
		}
	}
	if res.FileRecall != nil {
		if msg := checkRange(*res.FileRecall, 0, 1); msg != "" {
			ps.Add(path, line, "file_recall", "is %s; %s", num(*res.FileRecall), msg)
		}
	}
	if res.Duration != nil {
		if msg := checkRange(*res.Duration, 0, maxDuration); msg != "" {
			ps.Add(path, line, "duration", "is %s; %s", num(*res.Duration), msg)
		}
	}
	switch {
	case res.Attempts < 0 || res.Attempts > maxAttempts:
		ps.Add(path, line, "attempts", "is %d; want 1 to %d", res.Attempts, maxAttempts)
	case res.AttemptsResolved < 0 || res.AttemptsResolved > max(res.Attempts, 1):
		ps.Add(path, line, "attempts_resolved", "is %d but %d attempts were evaluated", res.AttemptsResolved, max(res.Attempts, 1))
	case res.Attempts > 1 && res.Resolved != (res.AttemptsResolved > 0):
		ps.Add(path, line, "attempts_resolved", "is %d but resolved is %t: a result is resolved when any attempt was", res.AttemptsResolved, res.Resolved)
	}
	return ps
}

// checkAttemptsPassed checks each attempt's count of fail-to-pass tests
// passed: one per attempt, each at most the instance's, and at least as
// many attempts passing them all as attempts resolved.
func checkAttemptsPassed(path string, line int, res *Result, nf int, ps Problems) Problems {
	if res.AttemptsPassed == nil {
		return ps
	}
	if res.Attempts < 2 || len(res.AttemptsPassed) != res.Attempts {
		ps.Add(path, line, "attempts_passed", "lists %d counts but attempts is %d: give one count per attempt, and only with attempts > 1", len(res.AttemptsPassed), res.Attempts)
		return ps
	}
	full := 0
	for i, n := range res.AttemptsPassed {
		if n < 0 || n > nf {
			ps.Add(path, line, fmt.Sprintf("attempts_passed[%d]", i), "is %d; the instance has %d FAIL_TO_PASS tests", n, nf)
			return ps
		}
		if n == nf {
			full++
		}
	}
	if full < res.AttemptsResolved {
		ps.Add(path, line, "attempts_passed", "has %d attempts passing every FAIL_TO_PASS test but attempts_resolved is %d: a resolved attempt passed them all", full, res.AttemptsResolved)
	}
	return ps
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
