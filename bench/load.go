package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/featbench/featbench/internal/pybase"
	"github.com/featbench/featbench/internal/pylock"
	"github.com/featbench/featbench/internal/registry"
	"github.com/featbench/featbench/internal/tomlstrict"
)

// Data is everything under data/: dataset versions, submissions and
// organisation logos.
type Data struct {
	Datasets    []*Dataset    // sorted by name, then release date
	Submissions []*Submission // sorted by dataset, split, date, folder
	// Logos are the organisation logos of data/logos/, by OrgKey of the
	// organisation's name.
	Logos map[string]Logo
	// Unlocked names the dataset versions ("name/version") that
	// data/datasets.lock.toml does not list: unpublished, still free to
	// change. Empty when there is no lock.
	Unlocked []string
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

// gitCommit is a commit id; debianPackage a Debian package name.
var (
	gitCommit     = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)
	debianPackage = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
)

// checkSourcePath says why a repository's source folder is unacceptable:
// it must be a clean path relative to the project root, inside it.
func checkSourcePath(p string) string {
	if msg := checkText(p, maxSourcePath, oneLine); msg != "" {
		return msg
	}
	switch {
	case strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || filepath.IsAbs(p):
		return fmt.Sprintf("%s is not a path relative to the project root", tomlstrict.Quote(p))
	case path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "-"):
		return fmt.Sprintf("%s must be a clean path inside the project (no . or .. parts, no trailing /)", tomlstrict.Quote(p))
	}
	return ""
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
// data field can smuggle a javascript: link into the site; a URL with a
// user name or password (which can disguise the real host, as in
// https://trusted.example@evil.example/), and one holding control or
// bidirectional formatting characters, are refused too.
func CheckURL(s string) error {
	if len(s) > maxURL {
		return fmt.Errorf("is %d bytes; at most %d", len(s), maxURL)
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%q is not a URL: %w", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: only http and https URLs are allowed", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", s)
	}
	if u.User != nil {
		return fmt.Errorf("%q holds a user name or password; give the URL without them", s)
	}
	for _, r := range s {
		if badRune(r) {
			return fmt.Errorf("%q holds the control character %U", s, r)
		}
	}
	return nil
}

var folderPattern = regexp.MustCompile(`^(\d{8})_(.+)$`)

// Load reads and validates everything under root (the data/ folder). It
// returns Problems listing every problem found, and no Data, when anything
// is wrong: a partial site is worse than none.
//
// Load walks root once without following symbolic links, refuses any
// entry that is not a regular file or folder and any file where none
// belongs, and reads each file with a size limit, so that nothing in a
// pull request reaches the site unvalidated.
func Load(ctx context.Context, root string) (*Data, error) {
	data, t, ps, broken, err := loadDatasets(root)
	if err != nil || t == nil {
		return nil, err
	}
	subs, orgs, sps := loadSubmissions(ctx, t, data, broken)
	ps = append(ps, sps...)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data.Submissions = subs
	ps = append(ps, checkSystems(subs)...)
	ps = append(ps, loadChecked(t, subs)...)
	var lps Problems
	data.Logos, lps = loadLogos(t.logos, orgs)
	ps = append(ps, lps...)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	return data, nil
}

// LoadDatasets reads and validates the dataset versions under root (the
// data/ folder) alone, as Load does, leaving the submissions, logos and
// attestations out: what evaluating needs, so that a broken submission
// elsewhere does not stop an evaluation.
func LoadDatasets(ctx context.Context, root string) (*Data, error) {
	data, t, ps, _, err := loadDatasets(root)
	if err != nil || t == nil {
		return nil, err
	}
	prefix := filepath.Join(root, "datasets") + string(filepath.Separator)
	var own Problems
	lock := filepath.Join(root, LockFile)
	for _, p := range ps {
		if strings.HasPrefix(p.File, prefix) || p.File == root || p.File == lock {
			own = append(own, p)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := own.Err(); err != nil {
		return nil, err
	}
	return data, nil
}

// loadDatasets walks root and loads its dataset versions; broken names the
// versions that failed. A nil tree means the walk itself failed (err, or
// problems in ps.Err()).
func loadDatasets(root string) (data *Data, t *tree, ps Problems, broken map[string]bool, err error) {
	t, ps, err = scan(root)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if t == nil {
		return nil, nil, nil, nil, ps.Err()
	}
	data = &Data{}
	broken = map[string]bool{} // dataset versions that failed to load
	var lps Problems
	data.Unlocked, lps = checkLock(t)
	ps = append(ps, lps...)

	for _, f := range t.datasets {
		key := strings.TrimPrefix(f.rel, "datasets/")
		if f.bad {
			broken[key] = true // the problem is listed already
			continue
		}
		ds, dps := loadDataset(f)
		ps = append(ps, dps...)
		if ds != nil {
			data.Datasets = append(data.Datasets, ds)
		} else {
			broken[key] = true
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
	return data, t, ps, broken, nil
}

func loadDataset(f *folder) (*Dataset, Problems) {
	var ps Problems
	mf := filepath.Join(f.path, ManifestFile)
	if f.file(ManifestFile) == nil {
		ps.Add(mf, 0, "", "cannot read the dataset manifest: the file is missing (a dataset folder needs %s)", ManifestFile)
		return nil, ps
	}
	raw, err := f.read(ManifestFile, maxManifestFile)
	if err != nil {
		return nil, Problems{readProblem(mf, err)}
	}
	ds := &Dataset{Dir: f.path}
	kl, dps := decodeTOML(mf, raw, &ds.Manifest, nil)
	if len(dps) > 0 {
		return nil, dps
	}
	parts := strings.Split(f.rel, "/")
	name, version := parts[1], parts[2]
	ps = validateManifest(mf, kl, &ds.Manifest, name, version, ps)
	repos := map[string]bool{}
	for _, r := range ds.Repos {
		repos[r.Name] = true
	}

	instPath := filepath.Join(f.path, InstancesFile)
	if f.file(InstancesFile) != nil {
		if raw, err := f.read(InstancesFile, maxInstancesFile); err != nil {
			ps = append(ps, readProblem(instPath, err))
		} else {
			ds.Instances, ps = readInstances(instPath, raw, repos, ps)
		}
	}
	if ds.Statements == StatementsPublic && !ds.HasInstances() {
		kl.Add(&ps, mf, "statements", "is %q but %s is missing: there are no statements here to publish", StatementsPublic, InstancesFile)
	}
	if ds.ImagesOrDefault() == ImagesInstance {
		ps = checkInstanceImages(instPath, ds.Instances, ps)
	}
	if f.file(CollectionFile) != nil {
		cp := filepath.Join(f.path, CollectionFile)
		if raw, err := f.read(CollectionFile, maxCollectionFile); err != nil {
			ps = append(ps, readProblem(cp, err))
		} else {
			var cps Problems
			ds.Collection, cps = decodeCollection(cp, raw)
			ps = append(ps, cps...)
		}
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
		kl.Add(&ps, mf, "splits", "a dataset needs at least one split")
	}
	for i := range ds.Splits {
		s := &ds.Splits[i]
		field := fmt.Sprintf("splits[%d]", i)
		if err := CheckName(s.Name); err != nil {
			kl.Add(&ps, mf, field+".name", "%v", err)
			continue
		}
		if ds.splits[s.Name] != nil {
			kl.Add(&ps, mf, field+".name", "split %q is defined twice", s.Name)
			continue
		}
		ds.splits[s.Name] = s
		switch {
		case len(s.Instances) == 0 && s.Size <= 0:
			kl.Add(&ps, mf, field, "split %q lists no instances and gives no size", s.Name)
		case len(s.Instances) > 0 && s.Size > 0 && s.Size != len(s.Instances):
			kl.Add(&ps, mf, field+".size", "is %d but the split lists %d instances", s.Size, len(s.Instances))
		}
		if len(s.Instances) > 0 && !ds.HasInstances() {
			kl.Add(&ps, mf, field+".instances", "lists instance ids but %s is missing", InstancesFile)
			continue
		}
		if !ds.HasInstances() {
			continue
		}
		if len(s.Instances) == 0 {
			kl.Add(&ps, mf, field+".instances", "split %q must list its instance ids when %s is present", s.Name, InstancesFile)
		}
		s.member = make([]bool, len(ds.Instances))
		s.instances = make([]*Instance, 0, len(s.Instances))
		for _, id := range s.Instances {
			in := ds.byID[id]
			if in == nil {
				kl.Add(&ps, mf, field+".instances", "unknown instance id %s in split %q (not in %s)", tomlstrict.Quote(id), s.Name, InstancesFile)
				continue
			}
			if s.member[in.pos] {
				kl.Add(&ps, mf, field+".instances", "instance %q is listed twice in split %q", id, s.Name)
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

// citationKey is what a BibTeX key may look like.
var citationKey = regexp.MustCompile(`^[A-Za-z0-9:._-]+$`)

// citationKind reports the BibTeX entry types a citation may have.
func citationKind(kind string) bool {
	switch kind {
	case "article", "inproceedings", "misc", "techreport":
		return true
	}
	return false
}

// validateManifest checks a manifest's own fields; the splits are checked
// against the instances by loadDataset.
func validateManifest(mf string, kl keyLines, m *Manifest, name, version string, ps Problems) Problems {
	bad := func(field, format string, args ...any) { kl.Add(&ps, mf, field, format, args...) }
	text := func(field, s string, max int, kind textKind) {
		if msg := checkText(s, max, kind); msg != "" {
			bad(field, "%s", msg)
		}
	}
	urlField := func(field, s string) {
		if s != "" {
			if err := CheckURL(s); err != nil {
				bad(field, "%v", err)
			}
		}
	}
	if m.Name != name {
		bad("name", "is %s but the folder is data/datasets/%s/", tomlstrict.Quote(m.Name), name)
	}
	if m.Version != version {
		bad("version", "is %s but the folder is %s/", tomlstrict.Quote(m.Version), version)
	}
	if err := CheckName(name); err != nil {
		bad("name", "%v", err)
	}
	if err := CheckName(version); err != nil {
		bad("version", "%v", err)
	}
	if m.ReleaseDate.IsZero() {
		bad("release_date", "is required (a date such as 2026-01-21)")
	}
	text("title", m.Title, maxTitle, oneLine)
	text("description", m.Description, maxDescription, multiLine)
	urlField("paper_url", m.PaperURL)
	urlField("source_url", m.SourceURL)
	if m.RankBy != "" && m.RankBy != RankResolved && m.RankBy != RankPassed {
		bad("rank_by", "is %s; want %q or %q", tomlstrict.Quote(m.RankBy), RankResolved, RankPassed)
	}
	if m.Layout != "" && m.Layout != LayoutComplete && m.Layout != LayoutMasked {
		bad("layout", "is %s; want %q (the source is the complete project, patch the gold solution) or %q (FeatureBench: patch is the masking diff)", tomlstrict.Quote(m.Layout), LayoutComplete, LayoutMasked)
	}
	if m.Images != "" && m.Images != ImagesBuild && m.Images != ImagesInstance {
		bad("images", "is %s; want %q (built from each repository's source) or %q (each instance's image_name, from its registry)", tomlstrict.Quote(m.Images), ImagesBuild, ImagesInstance)
	}
	if m.Statements != "" && m.Statements != StatementsPublic && m.Statements != StatementsPrivate {
		bad("statements", "is %s; want %q (the site publishes each instance's task page, the splits' JSONL and the trajectories) or %q (it publishes the figures only)", tomlstrict.Quote(m.Statements), StatementsPublic, StatementsPrivate)
	}
	if m.Level2 != "" && m.Level2 != Level2AgentCode && m.Level2 != Level2InRepo {
		bad("level2", "is %s; want %q or %q", tomlstrict.Quote(m.Level2), Level2AgentCode, Level2InRepo)
	}
	if c := m.Citation; c != nil {
		switch {
		case c.Key == "":
			bad("citation.key", "is required in a [citation] block (a BibTeX key such as \"zhou2026featurebench\")")
		case len(c.Key) > maxCitationKey:
			bad("citation.key", "%s", checkBytes(len(c.Key), maxCitationKey))
		case !citationKey.MatchString(c.Key):
			bad("citation.key", "is %s; a BibTeX key may hold only letters, digits, ':', '-', '_' and '.'", tomlstrict.Quote(c.Key))
		}
		if c.Kind != "" && !citationKind(c.Kind) {
			bad("citation.kind", "is %s; want article, inproceedings, misc or techreport", tomlstrict.Quote(c.Kind))
		}
		text("citation.title", c.Title, maxCitationText, oneLine)
		text("citation.venue", c.Venue, maxCitationText, oneLine)
		text("citation.eprint", c.Eprint, maxCitationID, oneLine)
		text("citation.doi", c.DOI, maxCitationID, oneLine)
		if len(c.Authors) > maxAuthors {
			bad("citation.authors", "lists %d authors; at most %d", len(c.Authors), maxAuthors)
		} else {
			for i, a := range c.Authors {
				field := fmt.Sprintf("citation.authors[%d]", i)
				if strings.TrimSpace(a) == "" {
					bad(field, "is empty")
				}
				text(field, a, maxAuthor, oneLine)
			}
		}
		if c.Year != 0 && (c.Year < minYear || c.Year > maxYear) {
			bad("citation.year", "is %d; want a year from %d to %d", c.Year, minYear, maxYear)
		}
		urlField("citation.url", c.URL)
	}
	if len(m.Repos) > maxRepositories {
		bad("repositories", "lists %d repositories; at most %d", len(m.Repos), maxRepositories)
		return ps
	}
	repos := map[string]bool{}
	for i, r := range m.Repos {
		field := fmt.Sprintf("repositories[%d]", i)
		switch {
		case r.Name == "":
			bad(field+".name", "is required")
		case repos[r.Name]:
			bad(field+".name", "repository %s is listed twice", tomlstrict.Quote(r.Name))
		default:
			if msg := checkText(r.Name, maxRepoName, oneLine); msg != "" {
				bad(field+".name", "%s", msg)
			}
		}
		repos[r.Name] = true
		urlField(field+".url", r.URL)
		text(field+".license", r.License, maxLicense, oneLine)
		if src := r.Source; src != nil {
			switch {
			case (src.Path == "") == (src.Git == ""):
				bad(field+".source", "gives %s; want either path (a folder of the project) or git (a repository, with commit)",
					map[bool]string{true: "both path and git", false: "neither path nor git"}[src.Path != ""])
			case src.Path != "":
				if msg := checkSourcePath(src.Path); msg != "" {
					bad(field+".source.path", "%s", msg)
				}
				if src.Commit != "" {
					bad(field+".source.commit", "is given with path; a commit belongs to a git source")
				}
			default:
				text(field+".source.git", src.Git, maxURL, oneLine)
				if strings.HasPrefix(src.Git, "-") {
					bad(field+".source.git", "may not start with '-'")
				}
				if !gitCommit.MatchString(src.Commit) {
					bad(field+".source.commit", "is %s; want the commit's full or abbreviated hex id", tomlstrict.Quote(src.Commit))
				}
			}
		}
		if env := r.Environment; env != nil {
			// The Python picks the base image cmd/eval builds the
			// repository's environment on: one it has no base for would
			// fail only when evaluating.
			if msg := pybase.Check(env.Python); msg != "" {
				bad(field+".environment.python", "%s", msg)
			}
			if env.BaseImage != "" {
				if _, err := registry.PinnedRef(env.BaseImage); err != nil {
					bad(field+".environment.base_image", "%v", err)
				} else if len(env.Packages) > 0 {
					bad(field+".environment.packages", "lists Debian packages, which go on the Debian bases only; a base_image from a registry brings its own (install more in pre_install)")
				}
			}
			if p := env.Interpreter; p != "" && (!path.IsAbs(p) || path.Clean(p) != p || checkText(p, maxCommand, oneLine) != "" || strings.ContainsAny(p, " '\"\\$`")) {
				bad(field+".environment.interpreter", "is %s; want an absolute path such as /opt/miniconda3/envs/testbed/bin/python", tomlstrict.Quote(p))
			}
			if len(env.Packages) > maxPackages {
				bad(field+".environment.packages", "lists %d; at most %d", len(env.Packages), maxPackages)
			}
			for j, p := range env.Packages {
				if !debianPackage.MatchString(p) || len(p) > maxPackage {
					bad(fmt.Sprintf("%s.environment.packages[%d]", field, j), "%s is not a Debian package name", tomlstrict.Quote(p))
				}
			}
			for _, c := range []struct {
				key  string
				cmds []string
			}{{"pre_install", env.PreInstall}, {"install", env.Install}} {
				if len(c.cmds) > maxCommands {
					bad(field+".environment."+c.key, "lists %d commands; at most %d", len(c.cmds), maxCommands)
				}
				for j, cmd := range c.cmds {
					f := fmt.Sprintf("%s.environment.%s[%d]", field, c.key, j)
					if strings.TrimSpace(cmd) == "" {
						bad(f, "is empty")
					}
					text(f, cmd, maxCommand, oneLine)
				}
			}
			checkNetwork(env, field+".environment", bad)
		}
		if st := r.Reported; st != nil {
			text(field+".reported.source", st.Source, maxSource, oneLine)
			for _, f := range []struct {
				name string
				fig  Figure
			}{{"lines", st.Lines}, {"files", st.Files}, {"functions", st.Functions}, {"test_points", st.TestPoints}} {
				checkFigure(&ps, mf, kl, field+".reported."+f.name, f.fig, 0, maxCount)
			}
		}
	}
	if len(m.Splits) > maxSplits {
		bad("splits", "lists %d splits; at most %d", len(m.Splits), maxSplits)
	}
	for i, s := range m.Splits {
		field := fmt.Sprintf("splits[%d]", i)
		text(field+".description", s.Description, maxSplitDescription, multiLine)
		if s.Size < 0 || s.Size > maxSplitSize {
			bad(field+".size", "is %d; want 1 to %d", s.Size, maxSplitSize)
		}
	}
	return ps
}

// checkFigure checks that a figure, when given, lies from lo to hi.
func checkFigure(ps *Problems, file string, kl keyLines, field string, f Figure, lo, hi float64) {
	if !f.Set() {
		return
	}
	if msg := checkRange(f.Value, lo, hi); msg != "" {
		kl.Add(ps, file, field, "is %s; %s", tomlstrict.Quote(f.Text), msg)
	}
}

// eachLine calls fn with each non-blank line of a JSONL file and its line
// number. The lines are slices of raw, not copies, trimmed of JSON's
// whitespace only.
func eachLine(raw []byte, fn func(line int, b []byte)) {
	for line := 1; len(raw) > 0; line++ {
		b := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			b, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		if b = trimJSONSpace(b); len(b) > 0 {
			fn(line, b)
		}
	}
}

// trimJSONSpace trims JSON's whitespace from both ends of b: bytes.Trim
// would build its set of characters on every line.
func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func readInstances(path string, raw []byte, repos map[string]bool, ps Problems) ([]*Instance, Problems) {
	if bytes.HasPrefix(raw, []byte(utf8BOM)) {
		return nil, append(ps, bomProblem(path))
	}
	var ins []*Instance
	eachLine(raw, func(line int, b []byte) {
		if len(b) > maxInstanceLine {
			ps.Add(path, line, "", "the line is %d bytes; an instance is at most %d", len(b), maxInstanceLine)
			return
		}
		ins = append(ins, &Instance{Line: line, raw: b})
	})
	if len(ins) == 0 && len(ps) == 0 {
		ps.Add(path, 0, "", "holds no instances; leave the file out for a dataset published only as figures")
		return nil, ps
	}
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
			ps.Add(path, line, "instance_id", "%v", err)
			continue
		}
		if first, dup := seen[in.InstanceID]; dup {
			ps.Add(path, line, "instance_id", "duplicate instance id %q (first on line %d)", in.InstanceID, first)
			continue
		}
		seen[in.InstanceID] = line
		n := len(ps)
		ps = checkInstance(path, in, repos, ps)
		if len(ps) == n {
			out = append(out, in)
		}
	}
	return out, ps
}

// checkInstance checks one decoded instance's fields and builds its test
// index.
func checkInstance(path string, in *Instance, repos map[string]bool, ps Problems) Problems {
	line := in.Line
	bad := func(field, format string, args ...any) { ps.Add(path, line, field, format, args...) }
	short := func(field, s string, max int) {
		if msg := checkID(s, max); msg != "" {
			bad(field, "%s", msg)
		}
	}
	switch {
	case in.Repo == "":
		bad("repo", "is required")
	case len(in.Repo) > maxRepoName:
		bad("repo", "%s", checkBytes(len(in.Repo), maxRepoName))
	case !repos[in.Repo]:
		bad("repo", "repository %s is not listed in %s", tomlstrict.Quote(in.Repo), ManifestFile)
	}
	if in.Level != 1 && in.Level != 2 {
		bad("level", "is %d; want 1 (extend a codebase) or 2 (build from scratch)", in.Level)
	}
	if in.MaskPatch != "" && in.Level != 2 {
		bad("mask_patch", "is for level 2 only (it masks the original package beside agent_code); this instance is level %d", in.Level)
	}
	short("base_commit", in.BaseCommit, maxBaseCommit)
	short("image_name", in.ImageName, maxImageName)
	short("created_at", in.CreatedAt, maxCreatedAt)
	if in.ProblemStatement == "" {
		bad("problem_statement", "is required")
	}
	for _, f := range []struct {
		name string
		n    int
		max  int
	}{
		{"problem_statement", len(in.ProblemStatement), maxProblemStatement},
		{"patch", len(in.Patch), maxPatch},
		{"test_patch", len(in.TestPatch), maxPatch},
		{"mask_patch", len(in.MaskPatch), maxPatch},
		{"repo_settings", len(in.RepoSettings), maxRepoSettings},
	} {
		if msg := checkBytes(f.n, f.max); msg != "" {
			bad(f.name, "%s", msg)
		}
	}
	if len(in.FailToPass) == 0 {
		bad("FAIL_TO_PASS", "an instance needs at least one fail-to-pass test")
	}
	lists := []struct {
		field string
		ids   []string
		max   int
		each  int
	}{
		{"FAIL_TO_PASS", in.FailToPass, maxTests, maxTestID},
		{"PASS_TO_PASS", in.PassToPass, maxTests, maxTestID},
		{"top_objects", in.TopObjects, maxTopObjects, maxTopObject},
	}
	listsOK := true
	for _, l := range lists {
		if len(l.ids) > l.max {
			bad(l.field, "lists %d entries; at most %d", len(l.ids), l.max)
			listsOK = false
			continue
		}
		for i, id := range l.ids {
			msg := checkID(id, l.each)
			if id == "" {
				msg = "is empty"
			}
			if msg != "" {
				bad(fmt.Sprintf("%s[%d]", l.field, i), "%s", msg)
				listsOK = false
				break
			}
		}
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"lines", in.Lines}, {"files", in.Files}, {"functions", in.Functions},
		{"f2p_test_points", in.F2PTestPoints}, {"p2p_test_points", in.P2PTestPoints}} {
		if f.v != nil && *f.v < 0 {
			bad(f.name, "is %d; it cannot be negative", *f.v)
		}
	}
	checkProvenance(in, bad)
	checkCanaries(in, bad)
	if listsOK {
		in.testIndex = make(map[string]int, len(in.FailToPass)+len(in.PassToPass))
		for i, id := range append(append([]string(nil), in.FailToPass...), in.PassToPass...) {
			if _, dup := in.testIndex[id]; dup {
				field := "FAIL_TO_PASS"
				if i >= len(in.FailToPass) {
					field = "PASS_TO_PASS"
				}
				bad(field, "test %q is listed twice (a test is either fail-to-pass or pass-to-pass, once)", id)
				break
			}
			in.testIndex[id] = i
		}
		in.plainTests = plainStrings(in.FailToPass) && plainStrings(in.PassToPass)
	}
	if len(in.CreatedAt) <= maxCreatedAt {
		if _, err := in.Created(); err != nil {
			bad("created_at", "%v", err)
		}
	}
	return ps
}

// checkInstanceImages checks, in a dataset whose instances bring their
// images (ImagesInstance), what grading takes from each instance: its
// image, and the test settings of its repo_settings.
func checkInstanceImages(path string, ins []*Instance, ps Problems) Problems {
	for _, in := range ins {
		if in.ImageName == "" {
			ps.Add(path, in.Line, "image_name", "is required: the dataset's images are the instances' own (images = %q)", ImagesInstance)
		} else if _, err := registry.Parse(in.ImageName); err != nil {
			ps.Add(path, in.Line, "image_name", "%v", err)
		}
		if _, err := in.TestSettings(); err != nil {
			ps.Add(path, in.Line, "repo_settings", "%v", err)
		}
	}
	return ps
}

// checkProvenance checks how the instance says it was collected: a known
// method, and what only history-based methods carry.
func checkProvenance(in *Instance, bad func(field, format string, args ...any)) {
	if in.Method != "" && !slices.Contains(Methods, in.Method) {
		bad("method", "is %q; want one of %s", in.Method, strings.Join(Methods, ", "))
	}
	history := in.Method == MethodRelease || in.Method == MethodNewComponents
	if in.PullNumber < 0 || in.PullNumber > maxPullNumber {
		bad("pull_number", "is %d; want a pull request number from 1 to %d", in.PullNumber, maxPullNumber)
	} else if in.PullNumber != 0 && !history {
		bad("pull_number", "is for the history-based methods (%s, %s); this instance's method is %s", MethodRelease, MethodNewComponents, in.MethodOrDefault())
	}
	if in.Release != "" {
		if msg := checkID(in.Release, maxRelease); msg != "" {
			bad("release", "%s", msg)
		} else if !history {
			bad("release", "is for the history-based methods (%s, %s); this instance's method is %s", MethodRelease, MethodNewComponents, in.MethodOrDefault())
		}
	}
	if len(in.Components) > 0 && in.Method != MethodNewComponents {
		bad("components", "are for the %s method; this instance's method is %s", MethodNewComponents, in.MethodOrDefault())
	}
	if len(in.Components) > maxComponents {
		bad("components", "lists %d entries; at most %d", len(in.Components), maxComponents)
		return
	}
	for i, c := range in.Components {
		c.check(fmt.Sprintf("components[%d]", i), bad)
	}
}

// check reports each field of the component that loading refuses.
func (c Component) check(field string, bad func(field, format string, args ...any)) {
	for _, f := range []struct {
		name, v string
		max     int
	}{{"file", c.File, maxSourcePath}, {"name", c.Name, maxTopObject}, {"signature", c.Signature, maxSignature}} {
		if f.v == "" {
			bad(field+"."+f.name, "is required")
		} else if msg := checkText(f.v, f.max, map[bool]textKind{true: multiLine}[f.name == "signature"]); msg != "" {
			bad(field+"."+f.name, "%s", msg)
		}
	}
	if !slices.Contains(ComponentKinds, c.Kind) {
		bad(field+".kind", "is %q; want one of %s", c.Kind, strings.Join(ComponentKinds, ", "))
	}
	if msg := checkText(c.Docstring, maxDocstring, multiLine); msg != "" {
		bad(field+".docstring", "%s", msg)
	}
}

// Problem is why loading would refuse the component ("docstring: holds
// the control character U+0007"), or "" when it would not: what
// collection checks before it writes one.
func (c Component) Problem() string {
	var first string
	c.check("", func(field, format string, args ...any) {
		if first == "" {
			first = strings.TrimPrefix(field, ".") + ": " + fmt.Sprintf(format, args...)
		}
	})
	return first
}

// checkCanaries checks the canary places and the gold audit's kinds.
func checkCanaries(in *Instance, bad func(field, format string, args ...any)) {
	if len(in.Canaries) > maxCanaries {
		bad("canaries", "lists %d entries; at most %d", len(in.Canaries), maxCanaries)
		return
	}
	for i, c := range in.Canaries {
		field := fmt.Sprintf("canaries[%d]", i)
		path, rest, _ := strings.Cut(c.Test, "::")
		switch {
		case path == "" || rest == "":
			bad(field+".test", "%q is not a test function's id (path::func or path::Class::func)", c.Test)
		default:
			if msg := checkID(c.Test, maxTestID); msg != "" {
				bad(field+".test", "%s", msg)
			}
		}
		if c.N < 0 || c.N > 10_000 {
			bad(field+".n", "is %d; want 0 to 10000", c.N)
		}
		if !slices.Contains(CanaryKinds, c.Kind) {
			bad(field+".kind", "is %q; want one of %s", c.Kind, strings.Join(CanaryKinds, ", "))
		}
		if (c.Kind == "raises") != (len(c.Alts) > 0) {
			bad(field+".alts", "are the exceptions a \"raises\" place may expect instead: given for that kind only, and then at least one")
		}
		for j, a := range c.Alts {
			if !pyIdentifier.MatchString(a) {
				bad(fmt.Sprintf("%s.alts[%d]", field, j), "%q is not a Python name", a)
			}
		}
	}
	if len(in.GoldAudit) > 50 {
		bad("gold_audit", "lists %d kinds; at most 50", len(in.GoldAudit))
	}
	for i, k := range in.GoldAudit {
		if msg := checkID(k, 40); msg != "" {
			bad(fmt.Sprintf("gold_audit[%d]", i), "%s", msg)
		}
	}
}

// pyIdentifier is an ASCII Python name.
var pyIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,99}$`)

// checkID reports why s is not an identifier-like value of at most max
// bytes on one line, or "".
func checkID(s string, max int) string {
	if msg := checkBytes(len(s), max); msg != "" {
		return msg
	}
	return checkText(s, max, oneLine)
}

// maxLock bounds the packages of an environment's lock.
const maxLock = 2000

// checkNetwork checks a networked environment's fields: the index URLs as
// cmd/eval will reach them, and the lock it will install.
func checkNetwork(env *Environment, field string, bad func(field, format string, args ...any)) {
	switch env.Network {
	case "", NetworkBuild:
	default:
		bad(field+".network", "is %s; want %q or none", tomlstrict.Quote(env.Network), NetworkBuild)
	}
	if env.Network == "" {
		for _, f := range []struct {
			key string
			set bool
		}{{"index_url", env.IndexURL != ""}, {"extra_index_url", len(env.ExtraIndexURL) > 0}, {"exclude_newer", env.ExcludeNewer != ""}, {"lock", len(env.Lock) > 0}} {
			if f.set {
				bad(field+"."+f.key, "is given, but network is not %q: the commands run offline", NetworkBuild)
			}
		}
		return
	}
	if env.IndexURL != "" {
		if msg := indexURLProblem(env.IndexURL); msg != "" {
			bad(field+".index_url", "%s %s", tomlstrict.Quote(env.IndexURL), msg)
		}
	}
	for j, u := range env.ExtraIndexURL {
		if msg := indexURLProblem(u); msg != "" {
			bad(fmt.Sprintf("%s.extra_index_url[%d]", field, j), "%s %s", tomlstrict.Quote(u), msg)
		}
	}
	if env.ExcludeNewer != "" {
		if _, err := time.Parse(time.RFC3339, env.ExcludeNewer); err != nil {
			bad(field+".exclude_newer", "%s is not an RFC 3339 time", tomlstrict.Quote(env.ExcludeNewer))
		}
	}
	if len(env.Lock) > maxLock {
		bad(field+".lock", "lists %d packages; at most %d", len(env.Lock), maxLock)
		return
	}
	for _, msg := range pylock.Check(env.Lock) {
		k, m, _ := strings.Cut(msg, ": ")
		bad(field+"."+k, "%s", m)
	}
}

// indexURLProblem says what is wrong with a package index URL, "" when
// nothing: an http(s) URL with a host, and no credentials (a dataset is
// published).
func indexURLProblem(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return "is not an http(s) URL"
	case u.User != nil:
		return "holds credentials, which a published dataset must not"
	case u.RawQuery != "" || u.Fragment != "":
		return "has a query or fragment"
	}
	return ""
}

// LoadSubmission reads and validates the dataset versions under root (as
// LoadDatasets does) and the one submission folder dir, which must be a
// submission folder under root: what validating a submission depends on,
// so that a broken submission elsewhere does not stop it. The submission
// is the Data's only one; attestations are not read.
func LoadSubmission(ctx context.Context, root, dir string) (*Data, *Submission, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	data, t, ps, broken, err := loadDatasets(root)
	if err != nil || t == nil {
		return nil, nil, err
	}
	prefix := filepath.Join(root, "datasets") + string(filepath.Separator)
	own := abs + string(filepath.Separator)
	lock := filepath.Join(root, LockFile)
	var mine Problems
	for _, p := range ps {
		if strings.HasPrefix(p.File, prefix) || p.File == root || p.File == lock || p.File == abs || strings.HasPrefix(p.File, own) {
			mine = append(mine, p)
		}
	}
	var f *folder
	for _, s := range t.submissions {
		if d, err := filepath.Abs(s.path); err == nil && d == abs {
			f = s
		}
	}
	if f == nil {
		if err := mine.Err(); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("%s is not a submission folder under %s (submissions/<name>/<version>/<split>/<YYYYMMDD>_<slug>/)", dir, root)
	}
	var sub *Submission
	if !f.bad {
		var sps Problems
		sub, _, sps = loadSubmission(f, data, broken, new([]byte))
		mine = append(mine, sps...)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := mine.Err(); err != nil {
		return nil, nil, err
	}
	data.Submissions = []*Submission{sub}
	return data, sub, nil
}
