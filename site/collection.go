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
	for _, r := range c.Repos {
		if m := r.MethodOrDefault(); m != bench.MethodTestDriven {
			f := templates.CollectionFunnel{Repo: r.Repository, Method: m, Title: m, About: methodAbout[m]}
			if t, ok := methodTitle[m]; ok {
				f.Title = t
			}
			for _, st := range r.Funnel {
				f.Steps = append(f.Steps, templates.CollectionStepRow{Step: st.Step, Count: st.Count})
			}
			info.Funnels = append(info.Funnels, f)
			info.Drops = append(info.Drops, dropRows(r)...)
			continue
		}
		info.Repos = append(info.Repos, templates.CollectionRepoRow{
			Name: r.Repository, TestFiles: r.TestFiles, Passing: r.Passing, Candidates: r.Candidates,
			Traced: r.Traced, Classified: r.Classified, WithP2P: r.WithP2P,
			Masked: r.Masked, Verified: r.Verified, Kept: r.Kept,
		})
		info.Drops = append(info.Drops, dropRows(r)...)
	}
	return info
}

// methodTitle and methodAbout say what a history-based method is and
// what its funnel's steps count, on the dataset's page.
var (
	methodTitle = map[string]string{
		bench.MethodRelease: "FeatBench's release-driven method",
	}
	methodAbout = map[string]string{
		bench.MethodRelease: "Releases (tags in the date window) and their notes (the changelog's section, else the tag's " +
			"message, else the titles of the pull requests they brought), sorted into features, improvements, fixes and " +
			"other changes; the pull requests the wanted entries name; those whose code patch changes Python and only " +
			"modifies existing functions and whose test patch adds tests; verified in fresh containers (a test of the " +
			"test patch fails before the patch and passes after it, the gold patch resolves three times, the empty one " +
			"does not); a code-free request written from the pull request.",
	}
)

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
