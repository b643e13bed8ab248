// Package templates holds the site's templ components and the view models
// they render. The site package fills the models; the components only lay
// them out, so no computation hides in a template.
package templates

import "strings"

// Site is what every page knows of the site.
type Site struct {
	Title       string
	Description string
	Base        string // base path, ending in "/"
	FeedURL     string // the Atom feed; empty when there is none
	Generated   string // build date, YYYY-MM-DD
	ChartsJS    string // URL of the ECharts library
	ChartsSRI   string // integrity hash when ChartsJS is a CDN copy
}

// Link is a titled URL; URLs are already prefixed with the base path.
type Link struct {
	Title   string
	URL     string
	Current bool // the link is the page being shown
	Active  bool // the page is in the link's section
}

// Page is the frame of one page.
type Page struct {
	Site        *Site
	Title       string
	Description string
	Crumbs      []Link
	Nav         []Link // the navigation, for the dataset the page shows
	Canonical   string // the page's absolute URL, when base_url has a host
	Charts      bool   // the page draws charts and needs the ECharts script
}

// FullTitle is the page's title with the site's.
func (p Page) FullTitle() string {
	if p.Title != "" && p.Title != p.Site.Title {
		return p.Title + " · " + p.Site.Title
	}
	return p.Site.Title
}

// Desc is the page's description, else the site's.
func (p Page) Desc() string {
	if p.Description != "" {
		return p.Description
	}
	return p.Site.Description
}

// Asset returns the URL of a file under assets/.
func (s *Site) Asset(name string) string { return s.Base + "assets/" + name }

// Cell is one figure in a table: its text as shown ("—" when missing),
// the number used to sort it, and an optional note (e.g. an interval).
type Cell struct {
	Text    string
	Sort    float64
	Missing bool
	Note    string
	// Published is the figure as its source printed it: Text may give it
	// to its column's decimals instead ("20" shown as "20.0").
	Published string
}

// String is the cell as shown: its text, or "—" when missing.
func (c Cell) String() string {
	if c.Missing {
		return "—"
	}
	return c.Text
}

// Badge is a label/value pill.
type Badge struct {
	Label string
	Value string
	URL   string
}

// Change is one dated entry of the leaderboard log.
type Change struct {
	Date    string
	Title   string
	Summary string
	URL     string
}

// Home is the front page.
type Home struct {
	Page
	Intro   string
	Badges  []Badge
	Board   *Board
	Changes []Change
	Boards  []Link // every leaderboard
}

// Board is one leaderboard: a dataset version's split.
type Board struct {
	ID         string // HTML id prefix
	RankBy     string // "resolved" or "passed": the column the board ranks by
	Dataset    string
	DatasetURL string
	Split      string
	Size       int
	Splits     []Link
	URL        string
	CSVURL     string
	JSONURL    string
	CompareURL string
	ReposURL   string // this split's section of the per-repository page
	HasLevels  bool   // the L1/L2 % resolved and % passed columns
	// HasAttempts: a system made several attempts per instance; the
	// pass@k column shows, and % resolved is per attempt (pass@1).
	HasAttempts bool
	HasTokens   bool
	HasCost     bool
	HasTurns    bool // a row's results report model requests (turns)
	HasCI       bool
	HasEval     bool // FeatBench's FV, RT and File% columns (per-instance results)
	// Methods are the collection methods of the split's instances when
	// they mix (bench.Methods order): a % resolved column each
	// (Row.Methods, in this order), and a filter.
	Methods []string
	// RankRanges: every ranked row has the 95% bootstrap range of its
	// rank (Row.RankLo, RankHi), from Resamples resamples of instances.
	RankRanges bool
	Resamples  int
	Reported   int  // ranked systems with only reported aggregates: no ranges
	Flagged    bool // a ranked row carries integrity flags
	// Tags are the filter checkboxes: the tags of the dataset's
	// vocabulary (featbench.toml's [site.boards]) that a row carries;
	// other tags show on their rows as text only.
	Tags []string
	// Models, Scaffolds and Orgs are the ranked rows' distinct values,
	// for the filters' choices.
	Models, Scaffolds, Orgs []string
	// Marks are the marks the rows' names carry, explained under the
	// board and numbered as the rows refer to them.
	Marks []Mark
	// Logos: every organisation on the board has a logo, and the rows
	// show them; otherwise none does, so that no system stands out for
	// having one.
	Logos      bool
	Rows       []Row // ranked systems, best first
	References []Row // reference rows (gold, empty): shown apart, not ranked
}

// RankLabel names the ranking figure in prose.
func (b *Board) RankLabel() string {
	if b.RankBy == "passed" {
		return "% passed"
	}
	return "% resolved"
}

// Mark is something a system's name carries beside its scaffold and
// model, such as "(routing)", with what it means (featbench.toml's
// [site.boards] marks); N numbers it on its board.
type Mark struct {
	N           int
	Text        string
	Explanation string
}

// Org is an organisation behind a system, with its logo when data/ has one.
type Org struct {
	Name    string
	LogoURL string
	Width   int
	Height  int
}

// Row is one system on a leaderboard.
type Row struct {
	// Methods are % resolved on the instances of each of Board.Methods,
	// in its order.
	Methods       []Cell
	Rank          int // 0 for a reference row
	RankLo        int // 95% bootstrap range of the rank; 0 when none
	RankHi        int
	Tied          int // other ranked systems whose ranges overlap this one's
	Reference     bool
	Name          string
	Slug          string
	URL           string // the system's page
	Scaffold      string
	Model         string
	Organisations string
	Orgs          []Org
	Resolved      Cell
	ResolvedLo    float64 // 95% Wilson interval, in percent, when HasCI
	ResolvedHi    float64
	HasCI         bool
	Passed        Cell
	TokensIn      Cell
	TokensOut     Cell
	TokensN       int // results the token means are taken over (per-instance only)
	Cost          Cell
	CostN         int // results the cost mean is taken over (per-instance only)
	Turns         Cell
	TurnsN        int // results the turns mean is taken over
	L1Resolved    Cell
	L1Passed      Cell
	L2Resolved    Cell
	L2Passed      Cell
	FV            Cell // % of instances whose every F2P test passed
	RT            Cell // % of instances whose every P2P test passed
	File          Cell // mean % of the gold patch's files the prediction touched
	// AnyResolved is pass@k, % of instances resolved by any of the k
	// attempts, when several were made: Resolved is then the mean over
	// attempts (pass@1), which the board ranks by.
	AnyResolved  Cell
	Date         string
	OpenScaffold bool
	OpenWeights  bool
	Checked      bool
	Attempts     int
	Tags         []string
	Marks        []Mark // the marks its name carries
	// Links are what stands behind the row's figures, each board row
	// linking them: its per-instance results, test logs and trajectories,
	// as published with the site or hosted where its metadata says.
	Links []Link
	// CIDerived: the interval of a reported row, derived from its
	// published rate and the split's size (Wilson), not from results.
	CIDerived bool
	// Flagged counts the results carrying each integrity flag, for a
	// ranked row: a board shows them beside the name.
	Flagged   []FlagCount
	Reported  bool
	Source    string
	SiteURL   string
	ReportURL string
}

// DatasetIndex lists every dataset version.
type DatasetIndex struct {
	Page
	Datasets []DatasetSummary
}

// DatasetSummary is one line of the dataset index.
type DatasetSummary struct {
	Title       string
	URL         string
	Version     string
	Released    string
	Instances   string
	Repos       int
	Splits      []Link
	Downloads   []Link // each split's instances as JSONL; none when only described
	Description string
}

// DatasetPage shows one dataset version.
type DatasetPage struct {
	Page
	Title       string
	Version     string
	Released    string
	Description string
	PaperURL    string
	SourceURL   string
	Versions    []Link
	Splits      []SplitInfo
	ReposURL    string
	ChartsURL   string
	RankLabel   string // what the leaderboards rank by, in prose
	Described   bool   // published figures only, no instances here
	// PrivateStatements: the instances are here but their statements are
	// not published (dataset.toml's statements = "private"): no task
	// pages, no JSONL, no trajectories.
	PrivateStatements bool
	Repos             []RepoInfo
	Citation          string // BibTeX, empty when the manifest gives none
	Collection        *CollectionInfo
	Instances         []InstanceRow
	// The instances no ranked system solves, of Evaluated instances some
	// ranked system has per-instance results on (reference rows are not
	// counted).
	Unsolved  []Link
	Evaluated int
	// Methods are the collection methods of the instances (bench.Methods
	// order), when some instance is not test-driven: the method column
	// and filter are shown then.
	Methods []string
}

// CollectionInfo says how cmd/collect built a dataset version, from its
// collection.json: how far each repository's test files got, and why the
// others were dropped.
type CollectionInfo struct {
	Seed string
	// Methods are the collection methods the repositories were collected
	// by, in bench.Methods order: each its own funnel and drops.
	Methods []CollectionMethod
}

// CollectionMethod is how the repositories of one collection method went:
// the test-driven method's fixed funnel (Repos), or a history-based
// method's steps (Steps, one count per repository of Funnel), and the
// drops with their one-line reasons.
type CollectionMethod struct {
	Method string
	About  string // what a history-based method's steps count
	Repos  []CollectionRepoRow
	Funnel []string  // the history-based method's repositories, columns of Steps
	Steps  []StepRow // its funnel's steps, in order
	Drops  []CollectionDropRow
}

// StepRow is one step of a history-based method's funnel: its count per
// repository ("" where a repository has no such step).
type StepRow struct {
	Step   string
	Counts []string
}

// CollectionRepoRow is one repository's funnel, from test files to kept
// instances.
type CollectionRepoRow struct {
	Name                                               string
	TestFiles, Passing, Candidates, Traced, Classified int
	WithP2P, Masked, Verified, Kept                    int
}

// CollectionDropRow is one reason instances were dropped, with the test
// files it dropped.
type CollectionDropRow struct {
	Repo   string
	Stage  string
	Reason string
	Count  int
	Files  string // the test files (and levels) or pull requests, comma-separated
}

// RepoInfo is one repository of a dataset.
type RepoInfo struct {
	Name      string
	URL       string
	License   string
	Instances int
}

// SplitInfo is a split with its board and download.
type SplitInfo struct {
	Name        string
	Description string
	Size        int
	BoardURL    string
	CompareURL  string
	ReposURL    string // its section of the per-repository page, when it has systems
	DownloadURL string
	Ranked      int // systems ranked on its leaderboard
	References  int // reference rows (gold, empty) beside them
}

// InstanceRow is one line of the instance index.
type InstanceRow struct {
	ID         string
	URL        string
	Repo       string
	Level      int
	Method     string // the collection method's key (bench.Method*)
	Lines      Cell
	F2P        int
	Splits     string
	Difficulty Cell
}

// ReposPage holds the per-repository tables of a dataset version: the gold
// statistics, then one section per split that has systems.
type ReposPage struct {
	Page
	Dataset    string
	DatasetURL string
	Stats      RepoStatsTable
	Difficulty []RepoDifficulty // per repository, when a ranked system has per-instance results
	Splits     []RepoSplit
}

// RepoDifficulty is how many ranked systems solve each of a repository's
// instances.
type RepoDifficulty struct {
	Repo                 string
	Instances, Evaluated int
	None, Some, All      int              // evaluated instances solved by no ranked system, some, every one
	Mean                 Cell             // mean % of the evaluated systems solving an instance
	Rows                 []InstanceSolved // hardest first
}

// InstanceSolved is one instance with how many systems solve it.
type InstanceSolved struct {
	ID     string
	URL    string
	Solved Cell // "2 of 5"; missing when no ranked system was evaluated on it
}

// RepoSplit is one split's section of the per-repository page.
type RepoSplit struct {
	ID       string // HTML id of the section, the fragment other pages link to
	Name     string
	Size     int  // instances in the split
	Counted  bool // its instances per repository are known
	BoardURL string
	Ranked   int        // systems ranked on the split's leaderboard
	Refs     int        // reference rows on it
	Systems  []RepoCol  // the grids' columns: systems with per-repository figures
	Grids    []RepoGrid // one repositories × systems grid per figure
}

// RepoCol is one system's column of the repository grids.
type RepoCol struct {
	Name   string
	URL    string
	Source string // where reported figures come from, empty when computed
	Ref    bool   // a reference row
}

// RepoGrid is one figure (% passed, % resolved, token I/O) for every
// repository and system of a split.
type RepoGrid struct {
	ID    string
	Title string
	Rows  []RepoGridRow
}

// RepoGridRow is one repository's row of a grid.
type RepoGridRow struct {
	Repo      string
	Instances Cell // instances of the repository in the split
	Cells     []Cell
}

// RepoStatsTable is the gold statistics per repository (paper Table 12).
type RepoStatsTable struct {
	Source string
	Rows   []RepoStatsRow
	// Counted: the instance counts per repository are known (the
	// instances are here); without them the column is left out.
	Counted bool
}

// RepoStatsRow is one repository's gold statistics.
type RepoStatsRow struct {
	Repo       string
	License    string
	Instances  Cell
	Lines      Cell
	Files      Cell
	Functions  Cell
	TestPoints Cell
}

// RepoSystemTable is one system's per-repository results (paper Tables 15–21).
type RepoSystemTable struct {
	ID      string
	Name    string
	Split   string
	URL     string
	Source  string
	Rows    []RepoScoreRow
	Counted bool // the rows give their instance counts
}

// RepoScoreRow is one system on one repository.
type RepoScoreRow struct {
	Repo      string
	Instances int
	Passed    Cell
	Resolved  Cell
	TokensIn  Cell
	TokensOut Cell
}

// SystemPage shows one system across the splits of a dataset version.
type SystemPage struct {
	Page
	Name          string
	Marks         []Mark // what its name carries beside scaffold and model, explained
	Scaffold      string
	Model         string
	Organisations string
	Orgs          []Org
	OpenWeights   bool
	OpenScaffold  bool
	Reference     bool
	Checked       bool
	SiteURL       string
	ReportURL     string
	Links         []Link // logs, trajectories, predictions
	Notes         string
	Tags          []string
	Dataset       string
	DatasetURL    string
	Splits        []SystemSplit
	RankBy        string // what the dataset's boards rank by: "resolved" or "passed"
	// The splits' table shows these columns when a split has figures for
	// them.
	HasLevels, HasEval, HasTokens, HasCost bool
	Repos                                  *RepoSystemTable
	FailureModes                           []Count
	FailureChart                           *Chart         // the failure modes as a chart (paper Figure 4)
	Flags                                  []FlagCount    // integrity flags its results carry, over every split
	Outcomes                               []OutcomeTable // per split with per-instance results
}

// SystemSplit is a system's figures on one split.
type SystemSplit struct {
	Split       string
	BoardURL    string
	Date        string
	Rank        int // 0: a reference row, not ranked
	RankLo      int // 95% bootstrap range of the rank; 0 when none
	RankHi      int
	Of          int
	Resolved    Cell
	Passed      Cell
	TokensIn    Cell
	TokensOut   Cell
	TokensN     int // instances the token means are taken over; 0 when reported
	Cost        Cell
	CostN       int
	Measured    bool // tokens and cost were counted by the harness (eval infer), not reported by the agent
	Instances   int  // instances in the split
	L1Resolved  Cell
	L1Passed    Cell
	L2Resolved  Cell
	L2Passed    Cell
	FV          Cell
	RT          Cell
	File        Cell
	Attempts    int
	AnyResolved Cell
	Reported    bool
	Source      string
	Checked     bool
	Links       []Link // this submission's downloads and links
}

// OutcomeTable is a system's result on every instance of one split.
type OutcomeTable struct {
	Split  string
	Open   bool // shown expanded
	Rows   []Outcome
	Legend []Flag // the integrity flags its rows show, explained under it
}

// Outcome is a system's result on one instance.
type Outcome struct {
	// Lead is the row's first cells, the instance's id (linked), its
	// repository and level: OutcomeLead's HTML, made once an instance
	// and shared by every system's page.
	Lead         HTML
	NoPrediction bool
	Resolved     bool
	Applied      bool
	Empty        bool // an empty prediction, at either level
	// F2P and P2P tests passed of those the instance has: "3/4".
	F2PPassed, F2PTotal int
	P2PPassed, P2PTotal int
	Failures            string
	Flags               []Flag // the prediction's integrity flags
}

// HTML is markup made by this package's own components (OutcomeLead,
// SystemLead), written as it is.
type HTML string

// Flag is an integrity flag of a prediction, with what it means: shown as
// its name, explained in a legend beside the table (and in a tooltip).
type Flag struct {
	Name        string
	Explanation string
}

// FlagCount is how many of a system's results on each split carry a flag.
type FlagCount struct {
	Flag
	Splits []SplitCount
}

// SplitCount is a number of a split's results, out of those the system
// has on it.
type SplitCount struct {
	Split string
	N     int
	Of    int
}

// Count is a label with a number.
type Count struct {
	Label string
	N     int
}

// Stat is a labelled figure that may be missing.
type Stat struct {
	Label string
	Value Cell
}

// InstancePage shows one task instance.
type InstancePage struct {
	Page
	ID           string
	Dataset      string
	DatasetURL   string
	Repo         string
	Level        int
	BaseCommit   string
	ImageName    string
	Created      string
	Splits       string
	Statement    string // HTML rendered from markdown without raw HTML
	Patch        string // highlighted HTML
	TestPatch    string // highlighted HTML
	PatchFiles   []string
	TestFiles    []string
	FailToPass   []string
	PassToPass   []string
	Stats        []Stat
	TopObjects   []string
	Difficulty   Cell
	Unsolved     bool // ranked systems were evaluated on it and none resolved it
	Systems      []InstanceSystem
	FlagLegend   []Flag    // the integrity flags Systems show, explained under them
	RepoURL      string    // the repository's source, when the manifest gives it
	CommitURL    string    // the base commit at its source, when it can be linked
	Settings     []Setting // repo_settings, key by key, when it is a JSON object
	RepoSettings string    // repo_settings as indented JSON otherwise
	// How the instance was collected: the method's key, and for the
	// history-based methods the pull request (PullURL when the forge is
	// known), the release and the new components the statement defines.
	Method     string
	PullNumber int
	PullURL    string
	Release    string
	Components []Component
	// Canaries says where grading adds canary tests, "" when it adds
	// none; GoldAudit what the gold patch's runs did at run time that a
	// prediction is compared with.
	Canaries  string
	GoldAudit []Flag
}

// Component is a new function, class or method of a new-components
// instance, as its statement defines it.
type Component struct {
	File, Name, Kind, Signature, Docstring string
}

// MethodLabel is a collection method's name for readers.
func MethodLabel(m string) string {
	switch m {
	case "release":
		return "Release"
	case "new-components":
		return "New components"
	case "", "test-driven":
		return "Test-driven"
	}
	return m
}

// MethodNote says in a phrase what a collection method is.
func MethodNote(m string) string {
	switch m {
	case "release":
		return "FeatBench: a feature pull request named in a release's notes; the request is synthesized from it"
	case "new-components":
		return "FEA-Bench: a pull request whose new functions and classes make most of its change"
	}
	return "FeatureBench: a feature removed from the code its tests reach"
}

// ReferenceSummary says how the reference rows did on the instance, for
// beside its difficulty, which does not count them; "" when none was
// evaluated on it.
func (p *InstancePage) ReferenceSummary() string {
	var parts []string
	for _, s := range p.Systems {
		if !s.Reference {
			continue
		}
		what := "does not resolve it"
		switch {
		case s.Resolved:
			what = "resolves it"
		case s.NoPrediction:
			what = "has no prediction"
		}
		parts = append(parts, s.Name+" ("+s.Split+") "+what)
	}
	if len(parts) == 0 {
		return ""
	}
	return "Reference rows, not counted: " + strings.Join(parts, "; ") + "."
}

// Setting is one key of an instance's repository settings.
type Setting struct {
	Key   string
	Value string
	Code  bool // Value is JSON (a list or an object), shown as code
}

// InstanceSystem is how one system did on an instance.
type InstanceSystem struct {
	Name string
	// Lead is the row's first cells, the system (linked, marked when a
	// reference row) and the split: SystemLead's HTML, made once a
	// system and split and shared by every instance's page.
	Lead         HTML
	Split        string
	Reference    bool // a reference row: not counted in the difficulty
	NoPrediction bool // evaluated on the split, but no result for the instance
	Resolved     bool
	Applied      bool
	Empty        bool // an empty prediction, at either level
	// Passed of Of fail-to-pass tests passed.
	Passed, Of int
	Failures   string
	Flags      []Flag // the prediction's integrity flags
	// Trajectories link the pages of the system's recorded trajectories
	// of the instance, one per attempt; none when it published none.
	Trajectories []Link
}

// ChartsPage holds the charts of a dataset version: those over its
// instances, then a section per split with systems.
type ChartsPage struct {
	Page
	Dataset    string
	DatasetURL string
	Sections   []ChartSection
}

// ChartSection is a titled group of charts, e.g. one split's.
type ChartSection struct {
	ID     string
	Title  string
	Intro  string
	Charts []Chart
}

// Chart is an ECharts option object with a caption and its data as a
// table, which is what a reader without JavaScript (or whose chart library
// failed to load) sees.
type Chart struct {
	ID      string
	Title   string
	Caption string
	Options any
	Height  int    // CSS pixels to draw it in; 0 for the stylesheet's
	Empty   string // why the chart cannot be drawn from the data, if so
	// Without names the systems the chart leaves out, and why (a
	// by-level chart of systems that publish no figures by level).
	Without string
	Table   ChartTable
}

// ChartTable is a chart's data as rows of text.
type ChartTable struct {
	Columns []string
	Rows    [][]string
}

// ComparePage lines systems up instance by instance. The table is drawn
// by site.js from Data, a page of rows at a time: a split has thousands of
// instances and dozens of systems. Pairs and Attempts are drawn without
// script; site.js pairs any two systems from Data.Pairs.
type ComparePage struct {
	Page
	Dataset    string
	DatasetURL string
	Split      string
	Instances  int
	Systems    []CompareSystem
	Neighbours []ComparePair     // each ranked system against the next one down
	Attempts   []CompareAttempts // systems with several attempts per instance
	// PerAttempt: a system made several attempts per instance, and is
	// compared on the share of them resolving each instance (pass@1).
	PerAttempt bool
	Data       CompareData
}

// ComparePair is two systems on the instances both made a prediction
// for: who resolved which, and the exact McNemar test on where they
// differ.
type ComparePair struct {
	A, B                                CompareSystem
	RankA, RankB                        int
	Both, OnlyA, OnlyB, Neither, Shared int
	P                                   string // the p-value as printed
	// Attempts: one of the two made several attempts per instance, and
	// the cells compare each instance's share of attempts resolving it
	// (pass@1): OnlyA is "higher for A", Both "equal, above 0"; P is the
	// sign test's, which is McNemar's exact test on 0-or-1 outcomes.
	Attempts bool
}

// CompareAttempts is a system's several attempts per instance: pass@k's
// unbiased estimate for k up to the attempts every result has, and how
// the attempts spread.
type CompareAttempts struct {
	System    CompareSystem
	K         int
	PassAt    []Cell // pass@1 … pass@K, in percent
	All       int    // instances resolved by every attempt
	Some      int    // by some but not every attempt
	None      int    // by none, or not predicted
	Mean      Cell   // one attempt's % resolved (pass@1)
	SD        Cell   // its standard deviation across attempts, in points
	Instances int
}

// CompareSystem is a system that can be compared.
type CompareSystem struct {
	Slug     string `json:"slug"` // names the system in the page's URL
	Name     string `json:"name"`
	URL      string `json:"url"`
	Resolved int    `json:"resolved"`
	Ref      bool   `json:"ref,omitempty"`
	// Pass1 is the % resolved per attempt (pass@1) of a system with
	// several attempts per instance; Resolved then counts the instances
	// any attempt resolved.
	Pass1 string `json:"pass1,omitempty"`
}

// CompareData is the compare view's data as site.js reads it.
type CompareData struct {
	Base     string          `json:"base"`  // instance page URLs are Base + id + "/"
	IDs      []string        `json:"ids"`   // instances in dataset order
	Repos    []string        `json:"repos"` // repository names
	Repo     []int           `json:"repo"`  // per instance: index into Repos
	Level    []int           `json:"level"` // per instance
	Systems  []CompareSystem `json:"systems"`
	Outcomes []string        `json:"outcomes"` // per system, a character per instance: y resolved, n not, . no prediction
	// Tries is, per system with several attempts per instance, "c/n"
	// per instance (c of its n attempts resolved it; "" for no
	// prediction), null for the others: such a system is compared on
	// the share c/n.
	Tries [][]string `json:"tries"`
	// Pairs holds every two systems i < j, in the order (0,1), (0,2), …,
	// (1,2), …: site.js shows the pair the reader picks.
	Pairs []PairData `json:"pairs"`
	// First and Second are the pair shown first: the two best ranked
	// systems, indexes into Systems.
	First  int `json:"first"`
	Second int `json:"second"`
}

// PairData is a pair of systems as site.js reads it.
type PairData struct {
	N   [4]int `json:"n"`             // both resolved, only the first, only the second, neither
	P   string `json:"p"`             // exact McNemar p-value as printed
	Low bool   `json:"low,omitempty"` // p < 0.05
	// Attempts: N compares shares of attempts (ComparePair.Attempts).
	Attempts bool `json:"attempts,omitempty"`
}

// NotFound is the 404 page.
type NotFound struct {
	Page
}

func lower(s string) string { return strings.ToLower(s) }

// SystemCount says what a board holds, as every page that counts its
// systems says it: ranked systems, and reference rows apart (they are
// baselines, not systems).
func SystemCount(ranked, refs int) string {
	var s string
	switch ranked {
	case 0:
		if refs == 0 {
			return "no system yet"
		}
		s = "no ranked system"
	case 1:
		s = "1 ranked system"
	default:
		s = itoa(ranked) + " ranked systems"
	}
	switch refs {
	case 0:
		return s
	case 1:
		return s + ", 1 reference row"
	}
	return s + ", " + itoa(refs) + " reference rows"
}

// TrajectoryPage shows one attempt's trajectory: the exchanges between an
// agent and its model that `eval infer`'s metering proxy recorded, turn by
// turn, in readable form, with the raw JSONL beside it.
type TrajectoryPage struct {
	Page
	System      string
	SystemURL   string
	Instance    string
	InstanceURL string
	Dataset     string
	Split       string
	Attempt     int
	RawURL      string // the whole trajectory as recorded
	RawSize     string
	Exchanges   []TrajectoryExchange
	Turns       int    // model requests forwarded
	Usage       string // the usage the exchanges report, summed; "" when none
	Limits      string // how bodies are cut, for the reader
	// Omitted says how many exchanges are not listed, and why; "" when
	// every exchange is.
	Omitted string
}

// TrajectoryExchange is one request and its answer.
type TrajectoryExchange struct {
	ID        string // the HTML id, from the sequence number
	Seq       int
	Turn      int // the model request's number; 0 for another request
	Time      string
	Method    string
	Path      string
	Kind      string // the model API, "" for another request
	Stream    bool
	Status    int
	Seconds   string
	Model     string
	Usage     string // "" when the response reports none
	Cost      string
	Error     string
	Limit     string // the limit that refused the request
	Truncated bool   // the recorded body was cut at the proxy's bound
	// Earlier is how many messages of the request repeat the previous
	// request's and are not shown again.
	Earlier  int
	Request  []TrajectoryMessage // the request's new messages
	Response []TrajectoryMessage // the answer: text and tool calls
	// Hidden says the bodies are not shown (the page's bound was
	// reached); the raw file has them.
	Hidden bool
}

// TrajectoryMessage is one message, or one part of an answer.
type TrajectoryMessage struct {
	Role  string
	Parts []TrajectoryPart
}

// TrajectoryPart is a piece of a message: text, a tool call, a tool's
// result; its text is shown as text, escaped.
type TrajectoryPart struct {
	Kind  string // "text", "tool call", "tool result", "thinking", …
	Title string // the tool's name, where there is one
	Text  string
	Cut   string // how much was cut, "" when nothing was
}

// MethodsWithFigures are the methods a row has a figure for, space
// separated: what the board's method filter keeps a row by.
func (r Row) MethodsWithFigures(methods []string) string {
	var out []string
	for i, c := range r.Methods {
		if !c.Missing && i < len(methods) {
			out = append(out, methods[i])
		}
	}
	return strings.Join(out, " ")
}

// DropsCaption is the caption of the method's drops table.
func (m CollectionMethod) DropsCaption() string {
	if m.Method == "test-driven" || m.Method == "" {
		return "Why candidates and instances were dropped"
	}
	return MethodLabel(m.Method) + ": why pull requests were dropped"
}
