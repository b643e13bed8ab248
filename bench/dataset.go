package bench

import (
	"time"

	"github.com/featbench/featbench/internal/pylock"
)

// ManifestFile and InstancesFile are the two files of a dataset version
// folder, data/datasets/<name>/<version>/.
const (
	ManifestFile  = "dataset.toml"
	InstancesFile = "instances.jsonl"
)

// Manifest describes one version of a dataset.
type Manifest struct {
	Name        string    `toml:"name"`
	Title       string    `toml:"title"`
	Version     string    `toml:"version"`
	ReleaseDate time.Time `toml:"release_date"`
	Description string    `toml:"description"`
	PaperURL    string    `toml:"paper_url"`
	SourceURL   string    `toml:"source_url"`
	// RankBy is the figure leaderboards rank by: "resolved" (the
	// default) or "passed", as FeatureBench's own leaderboard does.
	RankBy string `toml:"rank_by"`
	// Layout says how an instance relates to its repository's source, and
	// so how cmd/eval rebuilds its starting point: LayoutComplete (the
	// default) or LayoutMasked.
	Layout string `toml:"layout"`
	// Level2 says how level 2 instances are evaluated: Level2AgentCode
	// (the default, FeatureBench's from-scratch setting) or Level2InRepo.
	Level2 string `toml:"level2"`
	// Images says where each instance's environment comes from:
	// ImagesBuild (the default: built from the repository's source) or
	// ImagesInstance (the instance's image_name, from its registry).
	Images string `toml:"images"`
	// Statements says whether the site publishes the instances' task
	// pages (statement, patches, tests), the splits' JSONL and the
	// trajectories (whose prompts quote the statements):
	// StatementsPublic (the default where instances.jsonl is present) or
	// StatementsPrivate, for a held-out set whose figures are shown but
	// whose tasks must not be crawled.
	Statements string       `toml:"statements"`
	Citation   *Citation    `toml:"citation"`
	Repos      []Repository `toml:"repositories"`
	Splits     []Split      `toml:"splits"`
}

// Layouts of a dataset: what a repository's source holds and what an
// instance's patch means.
const (
	// LayoutComplete: the source is the complete project; an instance's
	// starting point (its base) is the source with its test_patch and its
	// patch reverse-applied, and patch is the gold solution. cmd/collect
	// writes this layout.
	LayoutComplete = "complete"
	// LayoutMasked: FeatureBench's published layout. The source is the
	// complete project; patch is the masking diff that removes the feature
	// (applied to reach the starting point), and a level 1 test_patch
	// deletes the fail-to-pass test files (reverse-applied to grade).
	LayoutMasked = "masked"
)

// Settings of level 2 instances.
const (
	// Level2AgentCode: the agent builds the feature from an empty folder;
	// its code is installed as the package agent_code, the repository is
	// restored, and the level 2 test patch makes the tests import from
	// agent_code (FeatureBench).
	Level2AgentCode = "agent_code"
	// Level2InRepo: a level 2 instance is a whole module built from
	// scratch inside the repository, evaluated as level 1 is.
	Level2InRepo = "in_repo"
)

// LayoutOrDefault is Layout with its default filled in.
func (m *Manifest) LayoutOrDefault() string {
	if m.Layout == "" {
		return LayoutComplete
	}
	return m.Layout
}

// Level2OrDefault is Level2 with its default filled in.
func (m *Manifest) Level2OrDefault() string {
	if m.Level2 == "" {
		return Level2AgentCode
	}
	return m.Level2
}

// Whether a dataset's statements are published.
const (
	StatementsPublic  = "public"
	StatementsPrivate = "private"
)

// KeepsStatementsPrivate reports whether the manifest says the
// statements are not to be published (nor the trajectories, whose
// prompts quote them).
func (d *Dataset) KeepsStatementsPrivate() bool { return d.Statements == StatementsPrivate }

// PublishesStatements reports whether the site publishes the instances'
// task pages, the splits' JSONL and the trajectories: the instances are
// here and the manifest does not keep their statements private.
func (d *Dataset) PublishesStatements() bool {
	return d.HasInstances() && !d.KeepsStatementsPrivate()
}

// Rank figures a dataset may rank its leaderboards by.
const (
	RankResolved = "resolved"
	RankPassed   = "passed"
)

// Ranking is RankBy with its default filled in.
func (m *Manifest) Ranking() string {
	if m.RankBy == "" {
		return RankResolved
	}
	return m.RankBy
}

// Citation is how to cite a dataset; the site shows it as BibTeX.
type Citation struct {
	Key     string   `toml:"key"`     // BibTeX key, e.g. "zhou2026featurebench"
	Kind    string   `toml:"kind"`    // BibTeX entry type: article, inproceedings, misc (default)
	Title   string   `toml:"title"`   // default: the dataset's title
	Authors []string `toml:"authors"` // "Family, Given" or "Given Family"
	Year    int      `toml:"year"`    // default: the release year
	Venue   string   `toml:"venue"`   // journal or booktitle
	Eprint  string   `toml:"eprint"`  // arXiv id, e.g. "2602.10975"
	URL     string   `toml:"url"`     // default: paper_url
	DOI     string   `toml:"doi"`
}

// Split is a named subset of a dataset version. A dataset published without
// its instances (only described) gives Size; otherwise Instances lists the
// ids, and Size, when given, must agree.
type Split struct {
	Name        string   `toml:"name"`
	Description string   `toml:"description"`
	Size        int      `toml:"size"`
	Instances   []string `toml:"instances"`

	instances []*Instance // the listed instances, once loaded
	member    []bool      // by instance position: is it in the split
}

// Repository is one source repository of a dataset. Reported holds gold
// statistics published for it when the instances themselves are not here.
type Repository struct {
	Name     string     `toml:"name"`
	URL      string     `toml:"url"`
	License  string     `toml:"license"`
	Reported *RepoStats `toml:"reported"`
	// Source and Environment say where the repository's code comes from
	// and how it is installed, so that cmd/eval can rebuild the
	// environment offline; cmd/collect writes the same fields.
	Source      *Source      `toml:"source"`
	Environment *Environment `toml:"environment"`
}

// Source is where a repository's code comes from: a folder of the project
// (Path, relative to the project root) or a git repository (Git, a URL or
// a path, at Commit).
type Source struct {
	Path   string `toml:"path,omitempty"`
	Git    string `toml:"git,omitempty"`
	Commit string `toml:"commit,omitempty"`
}

// Environment is how a repository is installed in its image. Commands run
// in the repository's folder without network, as root, with Debian's
// python3; Packages are extra Debian packages of the base image.
type Environment struct {
	// Python picks the base image (internal/pybase): "3.11", Debian
	// bookworm's, when empty.
	Python string `toml:"python"`
	// BaseImage, when set, is the base image instead: an image from a
	// registry, pinned by digest (NAME@sha256:…), which cmd/collect
	// resolved the repository's base_image to.
	BaseImage  string   `toml:"base_image"`
	Packages   []string `toml:"packages"`
	PreInstall []string `toml:"pre_install"`
	Install    []string `toml:"install"`
	// Network is NetworkBuild when the commands took packages from a
	// package index (behind cmd/collect's build gate, which reaches the
	// index and nothing else); empty when they ran offline.
	Network string `toml:"network,omitempty"`
	// IndexURL and ExtraIndexURL are the indexes collection used (simple
	// API URLs); cmd/eval fetches the locked files from them unless
	// [eval] index_url names others.
	IndexURL      string   `toml:"index_url,omitempty"`
	ExtraIndexURL []string `toml:"extra_index_url,omitempty"`
	// ExcludeNewer is the time (RFC 3339) collection hid files uploaded
	// after, where the index said when (PEP 700).
	ExcludeNewer string `toml:"exclude_newer,omitempty"`
	// Lock pins what the commands took from the index: each package's
	// name, version and the sha256 of the file installed, so that
	// cmd/eval rebuilds the same environment from the dataset later.
	Lock []pylock.Package `toml:"lock,omitempty"`
	// Interpreter is the Python the harness runs pytest (and its guard)
	// with in the image: "python3" from $PATH when empty, else an
	// absolute path (a FeatureBench image's environment is
	// /opt/miniconda3/envs/testbed/bin/python).
	Interpreter string `toml:"interpreter"`
}

// NetworkBuild is Environment.Network of an environment whose install
// took packages from a package index.
const NetworkBuild = "build"

// RepoStats are published per-repository averages of the gold solution.
type RepoStats struct {
	Source     string `toml:"source"`
	Lines      Figure `toml:"lines"`
	Files      Figure `toml:"files"`
	Functions  Figure `toml:"functions"`
	TestPoints Figure `toml:"test_points"`
}

// Dataset is a loaded dataset version.
type Dataset struct {
	Manifest
	Dir       string      // the version folder, for messages
	Instances []*Instance // nil when only described
	// Collection says how cmd/collect built the dataset; nil when it
	// did not, or its collection.json is not published.
	Collection *Collection
	byID       map[string]*Instance
	testIDs    map[string]string // every test id of every instance, to share
	splits     map[string]*Split
}

// Key is "name/version", the dataset's place under data/datasets and
// data/submissions.
func (d *Dataset) Key() string { return d.Name + "/" + d.Version }

// DisplayName is the title with the version, e.g. "FeatureBench v1.0".
func (d *Dataset) DisplayName() string {
	t := d.Title
	if t == "" {
		t = d.Name
	}
	return t + " " + d.Version
}

// internScan is how many of an instance's tests the interner compares
// before it hashes.
const internScan = 16

// interner shares the dataset's strings with decoded results: results
// name the same instances and tests thousands of times.
//
// A result's tests are looked for first among its instance's own (the
// last instance_id read), from just after the last one found, a few
// steps at most, then in the dataset's map: a million test ids hashed were
// a fifth of loading a small build's results, and results list tests in
// the instance's order. The bound keeps a result in another order, or an
// instance with thousands of tests, from making loading quadratic.
// Either way the string is the dataset's, equal to b.
//
// Likewise an instance id is compared first with the instance of order
// (the split's instances) after the last one found: cmd/eval and
// `eval submit` write results in the split's order, and hashing the ids
// was a tenth of loading.
func (d *Dataset) interner(order []*Instance) interner {
	key := d.Key()
	var cur *Instance
	next := 0  // index into cur's tests, fail-to-pass then pass-to-pass
	after := 0 // index into order after the last instance found there
	return interner{
		instance: func(b []byte) string {
			cur, next = nil, 0
			for k := after; k < after+2 && k < len(order); k++ {
				if order[k].InstanceID == string(b) {
					cur, after = order[k], k+1
					return cur.InstanceID
				}
			}
			if cur = d.byID[string(b)]; cur != nil {
				if cur.pos < len(order) && order[cur.pos] == cur {
					after = cur.pos + 1 // order is the dataset's: back in step
				}
				return cur.InstanceID
			}
			return ""
		},
		// Loading checks every result against its instance: without
		// this, it hashed each id a second time to find it.
		found: func() *Instance { return cur },
		nextTest: func() string {
			if cur == nil || !cur.plainTests {
				return ""
			}
			n := len(cur.FailToPass) + len(cur.PassToPass)
			if n == 0 {
				return ""
			}
			return cur.testAt(next % n)
		},
		test: func(b []byte) string {
			if cur != nil {
				n := len(cur.FailToPass) + len(cur.PassToPass)
				for step := 0; step < internScan && step < n; step++ {
					i := (next + step) % n
					if t := cur.testAt(i); t == string(b) {
						next = i + 1
						return t
					}
				}
			}
			return d.testIDs[string(b)]
		},
		dataset: func(b []byte) string {
			if string(b) == key {
				return key
			}
			return ""
		},
	}
}

// HasInstances reports whether the instances themselves are present.
func (d *Dataset) HasInstances() bool { return len(d.Instances) > 0 }

// Instance returns the instance with the id, or nil.
func (d *Dataset) Instance(id string) *Instance { return d.byID[id] }

// Split returns the named split, or nil.
func (d *Dataset) Split(name string) *Split { return d.splits[name] }

// SplitSize is the number of instances in a split: the denominator of the
// resolved rate.
func (d *Dataset) SplitSize(name string) int {
	s := d.splits[name]
	if s == nil {
		return 0
	}
	if len(s.Instances) > 0 {
		return len(s.Instances)
	}
	return s.Size
}

// SplitInstances returns the instances of a split in manifest order, or nil
// when the dataset is only described. The slice is shared: do not modify it.
func (d *Dataset) SplitInstances(name string) []*Instance {
	s := d.splits[name]
	if s == nil || !d.HasInstances() {
		return nil
	}
	return s.instances
}

// InSplit reports whether an instance of this dataset is in the split.
func (d *Dataset) InSplit(name string, in *Instance) bool {
	s := d.splits[name]
	return s != nil && in.pos < len(s.member) && d.Instances[in.pos] == in && s.member[in.pos]
}

// Repository returns the repository entry with the name, or nil.
func (d *Dataset) Repository(name string) *Repository {
	for i := range d.Repos {
		if d.Repos[i].Name == name {
			return &d.Repos[i]
		}
	}
	return nil
}
