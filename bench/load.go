package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Data is everything under data/: dataset versions and submissions.
type Data struct {
	Datasets    []*Dataset    // sorted by name, then release date
	Submissions []*Submission // sorted by dataset, split, date, folder
}

// Dataset returns the dataset version with the key "name/version", or nil.
func (d *Data) Dataset(key string) *Dataset {
	for _, ds := range d.Datasets {
		if ds.Key() == key {
			return ds
		}
	}
	return nil
}

// SubmissionsFor returns the submissions on one split of a dataset version.
func (d *Data) SubmissionsFor(ds *Dataset, split string) []*Submission {
	var out []*Submission
	for _, s := range d.Submissions {
		if s.Dataset == ds && s.Split == split {
			out = append(out, s)
		}
	}
	return out
}

// safeName is what a name that becomes a path or URL segment may look like.
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// CheckName reports why s cannot be used as one path segment, or nil.
func CheckName(s string) error {
	switch {
	case s == "":
		return errors.New("is empty")
	case len(s) > 200:
		return errors.New("is longer than 200 characters")
	case strings.ContainsAny(s, `/\`):
		return fmt.Errorf("%q contains a path separator", s)
	case strings.Contains(s, ".."):
		return fmt.Errorf("%q contains \"..\"", s)
	case !safeName.MatchString(s):
		return fmt.Errorf("%q may hold only letters, digits, '.', '_' and '-', starting with a letter or digit", s)
	}
	return nil
}

// CheckURL refuses anything but an absolute http or https URL, so that no
// data field can smuggle a javascript: link into the site.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: only http and https URLs are allowed", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", s)
	}
	return nil
}

var folderPattern = regexp.MustCompile(`^(\d{8})_(.+)$`)

// Load reads and validates everything under root (the data/ folder). It
// returns Problems listing every problem found, and no Data, when anything
// is wrong: a partial site is worse than none.
func Load(ctx context.Context, root string) (*Data, error) {
	if _, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	ps := misplaced(root)
	data := &Data{}
	broken := map[string]bool{} // dataset versions that failed to load

	dsDirs, err := filepath.Glob(filepath.Join(root, "datasets", "*", "*"))
	if err != nil {
		return nil, fmt.Errorf("listing datasets: %w", err)
	}
	for _, dir := range dsDirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		ds, dps := loadDataset(dir)
		ps = append(ps, dps...)
		if ds != nil {
			data.Datasets = append(data.Datasets, ds)
		} else {
			broken[filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir)] = true
		}
	}
	sort.Slice(data.Datasets, func(i, j int) bool {
		a, b := data.Datasets[i], data.Datasets[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if !a.ReleaseDate.Equal(b.ReleaseDate) {
			return a.ReleaseDate.Before(b.ReleaseDate)
		}
		return a.Version < b.Version
	})

	subs, sps := loadSubmissions(ctx, root, data, broken)
	ps = append(ps, sps...)
	data.Submissions = subs
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ps.Err(); err != nil {
		return nil, err
	}
	return data, nil
}

// misplaced reports data files at a depth where Load does not look for
// them, which would otherwise be silently ignored.
func misplaced(root string) Problems {
	var ps Problems
	want := map[string]int{ManifestFile: 3, InstancesFile: 3, MetadataFile: 5, ResultsFile: 5}
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		depth, known := want[d.Name()]
		if !known {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		top := map[string]string{ManifestFile: "datasets", InstancesFile: "datasets", MetadataFile: "submissions", ResultsFile: "submissions"}[d.Name()]
		if parts[0] != top || len(parts) != depth+1 {
			layout := "data/datasets/<name>/<version>/"
			if top == "submissions" {
				layout = "data/submissions/<name>/<version>/<split>/<YYYYMMDD>_<slug>/"
			}
			ps.add(path, 0, "", "misplaced: %s belongs in %s", d.Name(), layout)
		}
		return nil
	})
	return ps
}

func loadDataset(dir string) (*Dataset, Problems) {
	var ps Problems
	mf := filepath.Join(dir, ManifestFile)
	raw, err := os.ReadFile(mf)
	if err != nil {
		ps.add(mf, 0, "", "cannot read the dataset manifest: %v", err)
		return nil, ps
	}
	ds := &Dataset{Dir: dir}
	if dps := decodeTOML(mf, raw, &ds.Manifest); len(dps) > 0 {
		return nil, dps
	}
	name, version := filepath.Base(filepath.Dir(dir)), filepath.Base(dir)
	if ds.Name != name {
		ps.add(mf, 0, "name", "is %q but the folder is data/datasets/%s/", ds.Name, name)
	}
	if ds.Version != version {
		ps.add(mf, 0, "version", "is %q but the folder is %s/", ds.Version, version)
	}
	if err := CheckName(name); err != nil {
		ps.add(mf, 0, "name", "%v", err)
	}
	if err := CheckName(version); err != nil {
		ps.add(mf, 0, "version", "%v", err)
	}
	if ds.ReleaseDate.IsZero() {
		ps.add(mf, 0, "release_date", "is required (a date such as 2026-01-21)")
	}
	for _, f := range []struct{ field, v string }{{"paper_url", ds.PaperURL}, {"source_url", ds.SourceURL}} {
		if f.v != "" {
			if err := CheckURL(f.v); err != nil {
				ps.add(mf, 0, f.field, "%v", err)
			}
		}
	}
	repos := map[string]bool{}
	for i, r := range ds.Repos {
		field := fmt.Sprintf("repositories[%d].name", i)
		if r.Name == "" {
			ps.add(mf, 0, field, "is required")
		} else if repos[r.Name] {
			ps.add(mf, 0, field, "repository %q is listed twice", r.Name)
		}
		repos[r.Name] = true
		if r.URL != "" {
			if err := CheckURL(r.URL); err != nil {
				ps.add(mf, 0, fmt.Sprintf("repositories[%d].url", i), "%v", err)
			}
		}
	}

	instPath := filepath.Join(dir, InstancesFile)
	if raw, err := os.ReadFile(instPath); err == nil {
		ds.Instances, ps = readInstances(instPath, raw, repos, ps)
	} else if !errors.Is(err, fs.ErrNotExist) {
		ps.add(instPath, 0, "", "cannot read: %v", err)
	}
	ds.byID = make(map[string]*Instance, len(ds.Instances))
	ds.testIDs = map[string]string{}
	for i, in := range ds.Instances {
		ds.byID[in.InstanceID] = in
		in.pos = i
		for _, id := range in.FailToPass {
			ds.testIDs[id] = id
		}
		for _, id := range in.PassToPass {
			ds.testIDs[id] = id
		}
	}

	ds.splits = map[string]*Split{}
	if len(ds.Splits) == 0 {
		ps.add(mf, 0, "splits", "a dataset needs at least one split")
	}
	for i := range ds.Splits {
		s := &ds.Splits[i]
		field := fmt.Sprintf("splits[%d]", i)
		if err := CheckName(s.Name); err != nil {
			ps.add(mf, 0, field+".name", "%v", err)
			continue
		}
		if ds.splits[s.Name] != nil {
			ps.add(mf, 0, field+".name", "split %q is defined twice", s.Name)
			continue
		}
		ds.splits[s.Name] = s
		switch {
		case len(s.Instances) == 0 && s.Size <= 0:
			ps.add(mf, 0, field, "split %q lists no instances and gives no size", s.Name)
		case len(s.Instances) > 0 && s.Size > 0 && s.Size != len(s.Instances):
			ps.add(mf, 0, field+".size", "is %d but the split lists %d instances", s.Size, len(s.Instances))
		}
		if len(s.Instances) > 0 && !ds.HasInstances() {
			ps.add(mf, 0, field+".instances", "lists instance ids but %s is missing", InstancesFile)
			continue
		}
		if !ds.HasInstances() {
			continue
		}
		if len(s.Instances) == 0 {
			ps.add(mf, 0, field+".instances", "split %q must list its instance ids when %s is present", s.Name, InstancesFile)
		}
		s.member = make([]bool, len(ds.Instances))
		s.instances = make([]*Instance, 0, len(s.Instances))
		for _, id := range s.Instances {
			in := ds.byID[id]
			if in == nil {
				ps.add(mf, 0, field+".instances", "unknown instance id %q in split %q (not in %s)", id, s.Name, InstancesFile)
				continue
			}
			if s.member[in.pos] {
				ps.add(mf, 0, field+".instances", "instance %q is listed twice in split %q", id, s.Name)
				continue
			}
			s.member[in.pos] = true
			s.instances = append(s.instances, in)
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return ds, nil
}

// eachLine calls fn with each non-blank line of a JSONL file and its line
// number. The lines are slices of raw, not copies.
func eachLine(raw []byte, fn func(line int, b []byte)) {
	for line := 1; len(raw) > 0; line++ {
		b := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			b, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		if b = bytes.TrimSpace(b); len(b) > 0 {
			fn(line, b)
		}
	}
}

func readInstances(path string, raw []byte, repos map[string]bool, ps Problems) ([]*Instance, Problems) {
	var ins []*Instance
	eachLine(raw, func(line int, b []byte) {
		ins = append(ins, &Instance{Line: line, raw: b})
	})
	// Decoding is most of loading a dataset, before anything else can
	// start: lines are decoded on every CPU, then checked in order.
	errs := make([]error, len(ins))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(ins); i += workers {
				errs[i] = decodeInstance(ins[i].raw, ins[i])
			}
		})
	}
	wg.Wait()
	var out []*Instance
	seen := map[string]int{}
	for i, in := range ins {
		line := in.Line
		if errs[i] != nil {
			ps = append(ps, jsonProblem(path, line, errs[i]))
			continue
		}
		if err := CheckName(in.InstanceID); err != nil {
			ps.add(path, line, "instance_id", "%v", err)
			continue
		}
		if first, dup := seen[in.InstanceID]; dup {
			ps.add(path, line, "instance_id", "duplicate instance id %q (first on line %d)", in.InstanceID, first)
			continue
		}
		seen[in.InstanceID] = line
		if in.Repo == "" {
			ps.add(path, line, "repo", "is required")
		} else if !repos[in.Repo] {
			ps.add(path, line, "repo", "repository %q is not listed in %s", in.Repo, ManifestFile)
		}
		if in.Level != 1 && in.Level != 2 {
			ps.add(path, line, "level", "is %d; want 1 (extend a codebase) or 2 (build from scratch)", in.Level)
		}
		if len(in.FailToPass) == 0 {
			ps.add(path, line, "FAIL_TO_PASS", "an instance needs at least one fail-to-pass test")
		}
		in.testIndex = make(map[string]int, len(in.FailToPass)+len(in.PassToPass))
		for i, id := range append(append([]string(nil), in.FailToPass...), in.PassToPass...) {
			if _, dup := in.testIndex[id]; dup {
				field := "FAIL_TO_PASS"
				if i >= len(in.FailToPass) {
					field = "PASS_TO_PASS"
				}
				ps.add(path, line, field, "test %q is listed twice (a test is either fail-to-pass or pass-to-pass, once)", id)
				break
			}
			in.testIndex[id] = i
		}
		if in.ProblemStatement == "" {
			ps.add(path, line, "problem_statement", "is required")
		}
		if _, err := in.Created(); err != nil {
			ps.add(path, line, "created_at", "%v", err)
		}
		out = append(out, in)
	}
	return out, ps
}

// jsonProblem names the field of a JSON decoding error where it can.
func jsonProblem(path string, line int, err error) Problem {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "another type"
		if te.Type != nil {
			want = te.Type.String()
		}
		return Problem{File: path, Line: line, Field: te.Field, Msg: fmt.Sprintf("is a JSON %s, want %s", te.Value, want)}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return Problem{File: path, Line: line, Msg: fmt.Sprintf("malformed JSON at column %d: %v", se.Offset, err)}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return Problem{File: path, Line: line, Msg: "malformed JSON: the line ends inside a value"}
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return Problem{File: path, Line: line, Field: strings.Trim(f, `"`), Msg: "unknown field (check the spelling against CONTRIBUTING.md)"}
	}
	return Problem{File: path, Line: line, Msg: msg}
}

func loadSubmissions(ctx context.Context, root string, data *Data, broken map[string]bool) ([]*Submission, Problems) {
	subRoot := filepath.Join(root, "submissions")
	dirs, err := filepath.Glob(filepath.Join(subRoot, "*", "*", "*", "*"))
	if err != nil {
		return nil, Problems{{File: subRoot, Msg: err.Error()}}
	}
	var (
		mu   sync.Mutex
		ps   Problems
		subs []*Submission
	)
	// Results files are read into reused buffers: together they are most
	// of the bytes under data/, and nothing decoded keeps them.
	bufs := sync.Pool{New: func() any { return new([]byte) }}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		g.Go(func() error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			buf := bufs.Get().(*[]byte)
			defer bufs.Put(buf)
			s, sps := loadSubmission(root, dir, data, broken, buf)
			mu.Lock()
			defer mu.Unlock()
			ps = append(ps, sps...)
			if s != nil {
				subs = append(subs, s)
			}
			return nil
		})
	}
	_ = g.Wait()
	sort.Slice(subs, func(i, j int) bool { return subs[i].ID() < subs[j].ID() })
	return subs, ps
}

// loadSubmission loads one submission folder; buf is scratch space for
// its results file.
func loadSubmission(root, dir string, data *Data, broken map[string]bool, buf *[]byte) (*Submission, Problems) {
	var ps Problems
	rel, _ := filepath.Rel(filepath.Join(root, "submissions"), dir)
	parts := strings.Split(filepath.ToSlash(rel), "/")
	name, version, split, folder := parts[0], parts[1], parts[2], parts[3]
	mf := filepath.Join(dir, MetadataFile)

	ds := data.Dataset(name + "/" + version)
	if ds == nil {
		if broken[name+"/"+version] {
			ps.add(dir, 0, "", "not checked: dataset %s/%s has problems (listed above)", name, version)
		} else {
			ps.add(dir, 0, "", "no dataset %s/%s under data/datasets/ for this submission", name, version)
		}
		return nil, ps
	}
	if ds.Split(split) == nil {
		ps.add(dir, 0, "", "unknown split %q: %s has splits %s", split, ds.DisplayName(), strings.Join(splitNames(ds), ", "))
		return nil, ps
	}
	m := folderPattern.FindStringSubmatch(folder)
	if m == nil {
		ps.add(dir, 0, "", "folder name %q must be <YYYYMMDD>_<slug>", folder)
		return nil, ps
	}
	folderDate, err := time.Parse("20060102", m[1])
	if err != nil {
		ps.add(dir, 0, "", "folder name %q: %s is not a date", folder, m[1])
	}
	if err := CheckName(m[2]); err != nil {
		ps.add(dir, 0, "", "slug %v", err)
	}

	s := &Submission{Dataset: ds, Split: split, Folder: folder, Slug: m[2], Dir: dir}
	raw, err := os.ReadFile(mf)
	if err != nil {
		ps.add(mf, 0, "", "cannot read: %v", err)
		return nil, ps
	}
	if mps := decodeTOML(mf, raw, &s.Metadata); len(mps) > 0 {
		return nil, append(ps, mps...)
	}
	ps = validateMetadata(mf, &s.Metadata, folderDate, ds, ps)

	rf := filepath.Join(dir, ResultsFile)
	raw, err = readInto(rf, buf)
	switch {
	case err == nil:
		if s.Reported != nil {
			ps.add(mf, 0, "reported", "a submission has either %s or a [reported] block, not both", ResultsFile)
			break
		}
		s.Results, ps = readResults(rf, raw, ds, split, data, ps)
	case errors.Is(err, fs.ErrNotExist):
		if s.Reported == nil {
			ps.add(dir, 0, "", "needs %s with per-instance results, or a [reported] block in %s", ResultsFile, MetadataFile)
		}
	default:
		ps.add(rf, 0, "", "cannot read: %v", err)
	}
	if len(ps) > 0 {
		return nil, ps
	}
	s.index()
	return s, nil
}

// readInto reads a whole file into *buf, growing it to the file's size.
func readInto(path string, buf *[]byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// One byte more than the size, so that reaching the end needs no
	// further read; a file that grows meanwhile still reads whole.
	b := (*buf)[:0]
	if n := int(fi.Size()) + 1; cap(b) < n {
		b = make([]byte, 0, n)
	}
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
	*buf = b
	return b, nil
}

func splitNames(ds *Dataset) []string {
	var out []string
	for _, s := range ds.Splits {
		out = append(out, s.Name)
	}
	return out
}

func validateMetadata(mf string, m *Metadata, folderDate time.Time, ds *Dataset, ps Problems) Problems {
	for _, f := range []struct{ field, v string }{{"name", m.Name}, {"model", m.Model}, {"scaffold", m.Scaffold}} {
		if strings.TrimSpace(f.v) == "" {
			ps.add(mf, 0, f.field, "is required")
		}
	}
	if m.Date.IsZero() {
		ps.add(mf, 0, "date", "is required (a date such as 2026-01-21)")
	} else if !folderDate.IsZero() && m.Date.Format("20060102") != folderDate.Format("20060102") {
		ps.add(mf, 0, "date", "is %s but the folder name says %s", m.Date.Format("2006-01-02"), folderDate.Format("2006-01-02"))
	}
	for _, f := range []struct{ field, v string }{{"site_url", m.SiteURL}, {"report_url", m.ReportURL}} {
		if f.v != "" {
			if err := CheckURL(f.v); err != nil {
				ps.add(mf, 0, f.field, "%v", err)
			}
		}
	}
	if m.Attempts == 0 {
		m.Attempts = 1
	} else if m.Attempts < 0 {
		ps.add(mf, 0, "attempts", "is %d; want 1 or more", m.Attempts)
	}
	if r := m.Reported; r != nil {
		if !r.Resolved.Set() {
			ps.add(mf, 0, "reported.resolved", "is required in a [reported] block")
		}
		for lvl := range r.Levels {
			if lvl != "L1" && lvl != "L2" {
				ps.add(mf, 0, "reported.levels."+lvl, "unknown level; want L1 or L2")
			}
		}
		for repo := range r.Repos {
			if ds.Repository(repo) == nil {
				ps.add(mf, 0, "reported.repos."+repo, "repository %q is not listed in %s", repo, ds.Key())
			}
		}
	}
	return ps
}

func readResults(path string, raw []byte, ds *Dataset, split string, data *Data, ps Problems) ([]Result, Problems) {
	if !ds.HasInstances() {
		ps.add(path, 0, "", "per-instance results need the instances of %s, which are not in data/", ds.DisplayName())
		return nil, ps
	}
	member := ds.Split(split).member
	decoded, ok := decodeResults(raw, ds.interner())
	if !ok {
		decoded, ps = decodeResultLines(path, raw, ps)
	}
	out := decoded[:0]
	seen := make([]int, len(ds.Instances)) // by instance position: the line of its result
	for _, res := range decoded {
		line := res.Line
		if res.Dataset != "" && res.Dataset != ds.Key() {
			ps.add(path, line, "dataset", "result is for %s but the folder is for %s", res.Dataset, ds.Key())
			continue
		}
		in := ds.Instance(res.InstanceID)
		if in == nil {
			msg := fmt.Sprintf("unknown instance id %q in %s", res.InstanceID, ds.DisplayName())
			for _, other := range data.Datasets {
				if other != ds && other.Name == ds.Name && other.Instance(res.InstanceID) != nil {
					msg += fmt.Sprintf("; it belongs to %s: results for another dataset version", other.DisplayName())
					break
				}
			}
			ps.add(path, line, "instance_id", "%s", msg)
			continue
		}
		if !member[in.pos] {
			ps.add(path, line, "instance_id", "instance %q is not in split %q", res.InstanceID, split)
			continue
		}
		if first := seen[in.pos]; first > 0 {
			ps.add(path, line, "instance_id", "duplicate result for %q (first on line %d)", res.InstanceID, first)
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
// every problem.
func decodeResultLines(path string, raw []byte, ps Problems) ([]Result, Problems) {
	var out []Result
	eachLine(raw, func(line int, b []byte) {
		var res Result
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&res); err != nil {
			ps = append(ps, jsonProblem(path, line, err))
			return
		}
		if dec.More() {
			ps.add(path, line, "", "more than one JSON value on the line: one result per line")
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
	outcome := small[:0]
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
	for li, c := range lists {
		tests, name, off := in.FailToPass, "FAIL_TO_PASS", 0
		if c.p2p {
			tests, name, off = in.PassToPass, "PASS_TO_PASS", nf
		}
		for i, id := range c.ids {
			k, ok := in.testIndex[id]
			if !ok || k < off || k >= off+len(tests) {
				ps.add(path, line, c.field, "test %q is not in the instance's %s", id, name)
				bad = true
				break
			}
			if prev := outcome[k]; prev != 0 {
				ps.add(path, line, c.field, "test %q is also listed in %s", id, lists[prev-1].field)
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
		ps.add(path, line, "resolved", "is true but not every FAIL_TO_PASS and PASS_TO_PASS test passed with the patch applied")
	}
	if !res.Resolved && all {
		ps.add(path, line, "resolved", "is false but the patch applied and every test passed")
	}
	for _, v := range []struct {
		field string
		p     *int64
	}{{"tokens_in", res.TokensIn}, {"tokens_out", res.TokensOut}} {
		if v.p != nil && *v.p < 0 {
			ps.add(path, line, v.field, "is negative")
		}
	}
	if res.Cost != nil && *res.Cost < 0 {
		ps.add(path, line, "cost", "is negative")
	}
	return ps
}
