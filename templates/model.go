// Package templates holds the site's templ components and the view models
// they render. The site package fills the models; the components only lay
// them out, so no computation hides in a template.
package templates

// Site is what every page knows of the site.
type Site struct {
	Title       string
	Description string
	Base        string // base path, ending in "/"
	Nav         []Link
	Generated   string // build date, YYYY-MM-DD
	ChartsJS    string // URL of the ECharts library
	ChartsSRI   string // integrity hash when ChartsJS is a CDN copy
}

// Link is a titled URL; URLs are already prefixed with the base path.
type Link struct {
	Title   string
	URL     string
	Current bool
}

// Page is the frame of one page.
type Page struct {
	Site        *Site
	Title       string
	Description string
	Crumbs      []Link
	Charts      bool // the page draws charts and needs the ECharts script
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
	HasTokens  bool
	HasCost    bool
	HasCI      bool
	Tags       []string
	Rows       []Row
}

// Row is one system on a leaderboard.
type Row struct {
	Rank          int
	Name          string
	URL           string // the system's page
	Scaffold      string
	Model         string
	Organisations string
	Resolved      Cell
	Passed        Cell
	TokensIn      Cell
	TokensOut     Cell
	Cost          Cell
	L1Resolved    Cell
	L1Passed      Cell
	L2Resolved    Cell
	L2Passed      Cell
	Date          string
	OpenScaffold  bool
	OpenWeights   bool
	Checked       bool
	Attempts      int
	Tags          []string
	Reported      bool
	Source        string
	SiteURL       string
	ReportURL     string
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
	Described   bool // published figures only, no instances here
	Repos       []string
	Instances   []InstanceRow
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
	Systems     int
}

// InstanceRow is one line of the instance index.
type InstanceRow struct {
	ID         string
	URL        string
	Repo       string
	Level      int
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
	Splits     []RepoSplit
}

// RepoSplit is one split's section of the per-repository page.
type RepoSplit struct {
	ID       string // HTML id of the section, the fragment other pages link to
	Name     string
	Size     int // instances in the split
	BoardURL string
	Entries  int // systems on the split's leaderboard
	Systems  []RepoSystemTable
}

// RepoStatsTable is the gold statistics per repository (paper Table 12).
type RepoStatsTable struct {
	Source string
	Rows   []RepoStatsRow
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
	ID     string
	Name   string
	Split  string
	URL    string
	Source string
	Rows   []RepoScoreRow
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
	Scaffold      string
	Model         string
	Organisations string
	SiteURL       string
	ReportURL     string
	Notes         string
	Tags          []string
	Dataset       string
	DatasetURL    string
	Splits        []SystemSplit
	Repos         *RepoSystemTable
	FailureModes  []Count
	Solved        []Link
}

// SystemSplit is a system's figures on one split.
type SystemSplit struct {
	Split      string
	BoardURL   string
	Date       string
	Rank       int
	Of         int
	Resolved   Cell
	Passed     Cell
	TokensIn   Cell
	TokensOut  Cell
	Cost       Cell
	L1Resolved Cell
	L1Passed   Cell
	L2Resolved Cell
	L2Passed   Cell
	Reported   bool
	Source     string
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
	Systems      []InstanceSystem
	RepoSettings string
}

// InstanceSystem is how one system did on an instance.
type InstanceSystem struct {
	Name     string
	URL      string
	Split    string
	Resolved bool
	Applied  bool
	Passed   string
	Failures string
}

// ChartsPage holds the charts of a dataset version.
type ChartsPage struct {
	Page
	Dataset    string
	DatasetURL string
	Charts     []Chart
}

// Chart is an ECharts option object with a caption and a table fallback.
type Chart struct {
	ID      string
	Title   string
	Caption string
	Options any
	Empty   string // why the chart cannot be drawn from the data, if so
}

// ComparePage lines systems up instance by instance.
type ComparePage struct {
	Page
	Dataset    string
	DatasetURL string
	Split      string
	Systems    []CompareSystem
	Rows       []CompareRow
}

// CompareSystem is a column of the compare view.
type CompareSystem struct {
	Key      string
	Name     string
	URL      string
	Resolved int
}

// CompareRow is one instance in the compare view.
type CompareRow struct {
	ID       string
	URL      string
	Repo     string
	Level    int
	Resolved []bool // per system, in Systems order
	Missing  []bool // no prediction
}

// NotFound is the 404 page.
type NotFound struct {
	Page
}
