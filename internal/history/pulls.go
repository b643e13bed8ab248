package history

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PullRequest is a pull request as the history (or an export) tells it.
type PullRequest struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body,omitempty"`
	// Base is the commit the pull request's patch applies to: the merge
	// commit's first parent, the squash commit's parent, or the export's
	// base SHA. Merge is the commit that holds the change: the merge or
	// squash commit itself. The patch is the diff from Base to Merge.
	Base  string    `json:"base"`
	Merge string    `json:"merge"`
	Date  time.Time `json:"date"` // when it was merged
	// From is where it was read: FromMerge, FromSquash or FromExport.
	From string `json:"from"`

	changed string // what identifiers are matched against (WithChanged)
}

// Where a pull request was read from.
const (
	FromMerge  = "merge commit"
	FromSquash = "squash commit"
	FromExport = "export"
)

// Skipped is a commit that looks like a pull request's but is not taken
// as one, and why.
type Skipped struct {
	Commit string `json:"commit"`
	Reason string `json:"reason"`
}

var (
	// GitHub's merge commits: "Merge pull request #12 from owner/branch".
	mergeSubject = regexp.MustCompile(`^Merge pull request #(\d{1,9}) from (\S+)`)
	// A squash commit's subject ends in the pull request's number; a
	// title that already ended in one gets a second: "(#3) (#4)", and a
	// squash of several names them all: "(#3, #4)".
	squashTail = regexp.MustCompile(`((?:\s*\((?:#\d{1,9}(?:\s*,\s*)?)+\))+)\s*$`)
	prNumber   = regexp.MustCompile(`#(\d{1,9})`)
)

// squashBody is a squash commit's message after its subject: the pull
// request's description, unless it is only what GitHub writes by default,
// the squashed commits' subjects as a bullet list (and trailers), which
// describes the branch's history, not the change: then "".
func squashBody(rest string) string {
	rest = strings.TrimSpace(rest)
	for _, l := range strings.Split(rest, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "", strings.HasPrefix(t, "* "), trailer.MatchString(t):
		default:
			return rest
		}
	}
	return ""
}

var trailer = regexp.MustCompile(`^(?i:co-authored-by|signed-off-by|reviewed-by|acked-by|tested-by):`)

// maxNumber bounds a pull request's number (bench's pull_number).
const maxNumber = 1 << 30

// FromCommit reads a pull request from one commit: a merge commit whose
// subject is GitHub's "Merge pull request #N from …" (its second
// paragraph, GitHub's copy of the title, is the title; the rest the
// body), or a commit with one parent whose subject ends in "(#N)" (the
// subject without it is the title, the rest of the message the body). ok
// is false for any other commit; reason then says why a commit that
// named a pull request is not taken (a squash naming several, a merge
// of more than two parents).
func FromCommit(c Commit) (pr PullRequest, ok bool, reason string) {
	subject := c.Subject()
	rest := strings.TrimLeft(strings.TrimPrefix(c.Message, subject), "\n")
	if m := mergeSubject.FindStringSubmatch(subject); m != nil && len(c.Parents) >= 2 {
		n, _ := strconv.Atoi(m[1])
		if len(c.Parents) > 2 {
			return pr, false, fmt.Sprintf("merges %d parents: which one is the pull request's is not known", len(c.Parents))
		}
		if n < 1 || n > maxNumber {
			return pr, false, "names pull request number " + m[1]
		}
		title, body, _ := strings.Cut(rest, "\n")
		if strings.TrimSpace(title) == "" {
			title = "Merge " + m[2]
		}
		return PullRequest{Number: n, Title: OneLine(title, MaxTitle), Body: strings.TrimSpace(body),
			Base: c.Parents[0], Merge: c.Hash, Date: c.Date, From: FromMerge}, true, ""
	}
	if len(c.Parents) != 1 {
		return pr, false, ""
	}
	tail := squashTail.FindString(subject)
	if tail == "" {
		return pr, false, ""
	}
	nums := prNumber.FindAllStringSubmatch(tail, -1)
	if len(nums) != 1 {
		var names []string
		for _, n := range nums {
			names = append(names, "#"+n[1])
		}
		return pr, false, "a squash commit naming " + strings.Join(names, " and ") + ": its change cannot be told apart between them"
	}
	n, _ := strconv.Atoi(nums[0][1])
	if n < 1 || n > maxNumber {
		return pr, false, "names pull request number " + nums[0][1]
	}
	title := strings.TrimSpace(strings.TrimSuffix(subject, tail))
	return PullRequest{Number: n, Title: OneLine(title, MaxTitle), Body: squashBody(rest),
		Base: c.Parents[0], Merge: c.Hash, Date: c.Date, From: FromSquash}, true, ""
}

// PullRequests reads the pull requests among commits (newest first, as
// RevList gives them). A number read from more than one commit (a pull
// request merged, reverted and merged again; a squash cherry-picked to a
// maintenance branch) keeps the newest, and the others are skipped.
func PullRequests(commits []Commit) ([]PullRequest, []Skipped) {
	var prs []PullRequest
	var skipped []Skipped
	byNumber := map[int]int{}
	for _, c := range commits {
		pr, ok, reason := FromCommit(c)
		if !ok {
			if reason != "" {
				skipped = append(skipped, Skipped{Commit: c.Hash, Reason: reason})
			}
			continue
		}
		if i, dup := byNumber[pr.Number]; dup {
			skipped = append(skipped, Skipped{Commit: c.Hash, Reason: fmt.Sprintf("pull request #%d again: %s is taken", pr.Number, short(prs[i].Merge))})
			continue
		}
		byNumber[pr.Number] = len(prs)
		prs = append(prs, pr)
	}
	slices.SortFunc(prs, func(a, b PullRequest) int { return cmp.Compare(a.Number, b.Number) })
	return prs, skipped
}

func short(h string) string { return h[:min(12, len(h))] }

// CheckParents checks that a merge commit's first-parent diff is the pull
// request's work: every file it touches must have been touched by the
// pull request's own commits (those of the second parent not in the
// first). The first parent is the base, by git's convention, which
// GitHub's merges follow, however much either side moved on; a merge
// that changes what neither side touched (work done in the merge commit
// itself) would hand that to the pull request, and is refused. It
// returns "" or why.
func (g Git) CheckParents(ctx context.Context, pr PullRequest, merge Commit) (string, error) {
	if pr.From != FromMerge || len(merge.Parents) != 2 {
		return "", nil
	}
	base, err := g.run(ctx, 1<<10, "merge-base", merge.Parents[0], merge.Parents[1])
	if err != nil {
		return "", err
	}
	own, err := g.changedFiles(ctx, strings.TrimSpace(string(base)), merge.Parents[1])
	if err != nil {
		return "", err
	}
	got, err := g.changedFiles(ctx, merge.Parents[0], merge.Hash)
	if err != nil {
		return "", err
	}
	for _, f := range got {
		if !slices.Contains(own, f) {
			return fmt.Sprintf("the merge's first-parent diff changes %s, which the pull request's own commits never touched: work done in the merge commit itself is not the pull request's", f), nil
		}
	}
	return "", nil
}

// changedFiles lists the paths that differ between two commits.
func (g Git) changedFiles(ctx context.Context, a, b string) ([]string, error) {
	out, err := g.run(ctx, 0, "diff", "--no-renames", "--name-only", "-z", a, b, "--")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// exportPull is one pull request of GitHub's REST API
// (GET /repos/{owner}/{repo}/pulls?state=closed), the fields read.
type exportPull struct {
	Number         *int    `json:"number"`
	Title          *string `json:"title"`
	Body           *string `json:"body"`
	MergeCommitSHA *string `json:"merge_commit_sha"`
	MergedAt       *string `json:"merged_at"`
	Base           *struct {
		SHA *string `json:"sha"`
	} `json:"base"`
}

// maxExport bounds an export file.
const maxExport = 256 << 20

// ReadExport reads a JSON export of pull requests in GitHub's REST shape:
// an array of objects with number, title, body, base.sha,
// merge_commit_sha and merged_at (other fields are ignored). Pull
// requests never merged (merged_at null) are left out. A field of the
// wrong type or a missing one is an error naming the file, the entry and
// the field.
func ReadExport(path string) ([]PullRequest, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("pull request export: %w", err)
	}
	if fi.Size() > maxExport {
		return nil, fmt.Errorf("pull request export %s: %d bytes, over the bound of %d", path, fi.Size(), maxExport)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pull request export: %w", err)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("pull request export %s: not a JSON array of pull requests: %w", path, err)
	}
	var prs []PullRequest
	seen := map[int]int{}
	for i, e := range entries {
		bad := func(field, format string, args ...any) error {
			return fmt.Errorf("pull request export %s: entry %d, field %s: %s", path, i, field, fmt.Sprintf(format, args...))
		}
		var p exportPull
		if err := json.Unmarshal(e, &p); err != nil {
			return nil, bad("(entry)", "%v", err)
		}
		switch {
		case p.Number == nil:
			return nil, bad("number", "is missing")
		case *p.Number < 1 || *p.Number > maxNumber:
			return nil, bad("number", "is %d; want 1 to %d", *p.Number, maxNumber)
		case p.Title == nil:
			return nil, bad("title", "is missing")
		}
		if p.MergedAt == nil {
			continue // closed without merging
		}
		merged, err := time.Parse(time.RFC3339, *p.MergedAt)
		if err != nil {
			return nil, bad("merged_at", "%q is not an RFC 3339 time", *p.MergedAt)
		}
		if p.Base == nil || p.Base.SHA == nil || !hexHash.MatchString(*p.Base.SHA) {
			return nil, bad("base.sha", "is not a full commit hash")
		}
		if p.MergeCommitSHA == nil || !hexHash.MatchString(*p.MergeCommitSHA) {
			return nil, bad("merge_commit_sha", "is not a full commit hash")
		}
		if j, dup := seen[*p.Number]; dup {
			return nil, bad("number", "%d is entry %d's too", *p.Number, j)
		}
		seen[*p.Number] = i
		body := ""
		if p.Body != nil {
			body = Bound(Clean(*p.Body), MaxMessage)
		}
		prs = append(prs, PullRequest{Number: *p.Number, Title: OneLine(*p.Title, MaxTitle), Body: body,
			Base: *p.Base.SHA, Merge: *p.MergeCommitSHA, Date: merged.UTC(), From: FromExport})
	}
	slices.SortFunc(prs, func(a, b PullRequest) int { return cmp.Compare(a.Number, b.Number) })
	return prs, nil
}
