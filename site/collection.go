package site

import (
	"sort"
	"strconv"
	"strings"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/templates"
)

// collectionInfo is the dataset page's "how this dataset was built"
// section, from collection.json; nil when the version has none.
func collectionInfo(c *bench.Collection) *templates.CollectionInfo {
	if c == nil {
		return nil
	}
	info := &templates.CollectionInfo{Seed: strconv.FormatUint(c.Seed, 10)}
	byMethod := map[string]*templates.CollectionMethod{}
	for _, r := range c.Repos {
		m := r.MethodOrDefault()
		cm := byMethod[m]
		if cm == nil {
			cm = &templates.CollectionMethod{Method: m, About: methodAbout[m]}
			byMethod[m] = cm
		}
		if m == bench.MethodTestDriven {
			cm.Repos = append(cm.Repos, templates.CollectionRepoRow{
				Name: r.Repository, TestFiles: r.TestFiles, Passing: r.Passing, Candidates: r.Candidates,
				Traced: r.Traced, Classified: r.Classified, WithP2P: r.WithP2P,
				Masked: r.Masked, Verified: r.Verified, Kept: r.Kept,
			})
		} else {
			addFunnel(cm, r)
		}
		cm.Drops = append(cm.Drops, dropRows(r)...)
	}
	for _, m := range bench.Methods {
		if cm := byMethod[m]; cm != nil {
			info.Methods = append(info.Methods, *cm)
		}
	}
	return info
}

// addFunnel adds a history-based repository's funnel as a column of its
// method's steps: a step it shares with the repositories before keeps its
// row, a new one is added in its order.
func addFunnel(cm *templates.CollectionMethod, r *bench.CollectionRepo) {
	col := len(cm.Funnel)
	cm.Funnel = append(cm.Funnel, r.Repository)
	for i := range cm.Steps {
		cm.Steps[i].Counts = append(cm.Steps[i].Counts, "")
	}
	at := 0
	for _, st := range r.Funnel {
		row := -1
		for i := at; i < len(cm.Steps); i++ {
			if cm.Steps[i].Step == st.Step {
				row = i
				break
			}
		}
		if row < 0 {
			row = at
			counts := make([]string, col+1)
			cm.Steps = append(cm.Steps[:row], append([]templates.StepRow{{Step: st.Step, Counts: counts}}, cm.Steps[row:]...)...)
		}
		cm.Steps[row].Counts[col] = strconv.Itoa(st.Count)
		at = row + 1
	}
}

// dropRows groups a repository's drops by stage and reason, so that one
// reason shared by many files is one row; the most frequent reasons first.
func dropRows(r *bench.CollectionRepo) []templates.CollectionDropRow {
	type key struct{ stage, reason string }
	files := map[key][]string{}
	var order []key
	for _, d := range r.Drops {
		k := key{d.Stage, d.Reason}
		if _, ok := files[k]; !ok {
			order = append(order, k)
		}
		f := d.Subject()
		if d.Level > 0 {
			f += " (L" + strconv.Itoa(d.Level) + ")"
		}
		files[k] = append(files[k], f)
	}
	sort.SliceStable(order, func(i, j int) bool { return len(files[order[i]]) > len(files[order[j]]) })
	rows := make([]templates.CollectionDropRow, 0, len(order)+1)
	if f := r.Failure; f != nil {
		// The repository stopped there: everything it had left went.
		rows = append(rows, templates.CollectionDropRow{
			Repo: r.Repository, Stage: f.Stage, Reason: "the repository failed: " + f.Reason, Count: 1, Files: "the whole repository",
		})
	}
	for _, k := range order {
		fs := files[k]
		rows = append(rows, templates.CollectionDropRow{
			Repo: r.Repository, Stage: k.stage, Reason: k.reason, Count: len(fs), Files: strings.Join(fs, ", "),
		})
	}
	return rows
}

// methodAbout says what a history-based method's funnel's steps count, on
// the dataset's page.
var methodAbout = map[string]string{
	bench.MethodRelease: "Releases (tags in the date window) and their notes (the changelog's section, else the tag's " +
		"message, else the titles of the pull requests they brought), sorted into features, improvements, fixes and " +
		"other changes; the pull requests the wanted entries name; those whose code patch changes Python and only " +
		"modifies existing functions and whose test patch adds tests; verified in fresh containers (a test of the " +
		"test patch fails before the patch and passes after it, the gold patch resolves three times, the empty one " +
		"does not); a code-free request written from the pull request.",
	bench.MethodNewComponents: "Every pull request merged in the window whose code patch changes Python and whose test " +
		"patch adds tests; the functions, classes and methods it adds, found by diffing the syntax trees before and " +
		"after (moved or renamed ones do not count), must be more than a quarter of its edited lines, the gold patch " +
		"under 8K tokens, its intent a new feature; verified in fresh containers (the test patch's tests fail or do " +
		"not import before the patch, all pass after it, the gold patch resolves three times, the empty one does " +
		"not); the statement is the pull request's request with the new components' definitions.",
}
