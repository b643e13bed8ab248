package bench_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
)

// lockGood writes a lock of every dataset version of the good tree but
// described/v1.0, as AddToLock writes it.
func lockGood(t *testing.T, root string) {
	t.Helper()
	for _, key := range []string{"alpha/v1", "alpha/v2"} {
		e, err := bench.DatasetLock(root, key)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := bench.AddToLock(root, e)
		if err != nil {
			t.Fatal(err)
		}
		writeText(t, abspath(root, bench.LockFile), string(raw))
	}
}

// locked is a mutation of the good tree after locking it.
func locked(ms ...mutation) mutation {
	return func(t *testing.T, root string) {
		t.Helper()
		lockGood(t, root)
		chain(ms...)(t, root)
	}
}

func TestLockGood(t *testing.T) {
	root := copyGood(t)
	lockGood(t, root)
	data, err := bench.Load(context.Background(), root)
	if err != nil {
		t.Fatalf("Load with a matching lock: %v", err)
	}
	if got, want := strings.Join(data.Unlocked, " "), "described/v1.0"; got != want {
		t.Errorf("Unlocked = %q, want %q", got, want)
	}
	// Without a lock nothing is published, and nothing is reported.
	data, err = bench.Load(context.Background(), copyGood(t))
	if err != nil || len(data.Unlocked) != 0 {
		t.Errorf("Load without a lock: Unlocked = %v, err %v; want none", data.Unlocked, err)
	}
}

// The lock records what sha256sum prints for each file.
func TestDatasetLock(t *testing.T) {
	root := copyGood(t)
	e, err := bench.DatasetLock(root, "alpha/v1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(maps.Keys(e.Files)), []string{"dataset.toml", "instances.jsonl"}; !slices.Equal(got, want) {
		t.Errorf("files = %v, want %v", got, want)
	}
	if got, want := e.Files["instances.jsonl"], sha256Hex(t, readGood(t, a1Instances)); got != want {
		t.Errorf("instances.jsonl sha256 = %s, want %s", got, want)
	}
	for _, bad := range []string{"alpha", "alpha/v1/full", "alpha/../v1", "alpha/v9", ""} {
		if _, err := bench.DatasetLock(root, bad); err == nil {
			t.Errorf("DatasetLock(%q): no error", bad)
		}
	}
	env := outside(t, root, ".env", secret)
	symlink(env, a1Instances)(t, root)
	if _, err := bench.DatasetLock(root, "alpha/v1"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("DatasetLock with a linked file: %v, want a refusal", err)
	}
	writeText(t, abspath(root, "datasets/alpha/v2/notes.txt"), "x")
	if _, err := bench.DatasetLock(root, "alpha/v2"); err == nil || !strings.Contains(err.Error(), "notes.txt: unexpected file") {
		t.Errorf("DatasetLock with a stray file: %v, want a refusal naming it", err)
	}
}

func TestAddToLock(t *testing.T) {
	root := copyGood(t)
	lockGood(t, root)
	raw := readText(t, abspath(root, bench.LockFile))
	if !strings.HasPrefix(raw, "# Published dataset versions") || strings.Count(raw, "[[locked]]") != 2 {
		t.Errorf("the lock lacks its header or an entry:\n%s", raw)
	}
	e, err := bench.DatasetLock(root, "alpha/v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bench.AddToLock(root, e); err == nil || !strings.Contains(err.Error(), "locks alpha/v1 already") {
		t.Errorf("AddToLock of a locked version: %v, want a refusal", err)
	}
	// The current lock is kept as written, comments included.
	writeText(t, abspath(root, bench.LockFile), "# mine\n[[locked]]\ndataset = \"alpha/v2\"\nfiles = { \"dataset.toml\" = \""+strings.Repeat("0", 64)+"\" }")
	out, err := bench.AddToLock(root, e)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# mine\n[[locked]]\ndataset = \"alpha/v2\"\nfiles = { \"dataset.toml\" = \"" + strings.Repeat("0", 64) + "\" }\n\n" + e.TOML(); string(out) != want {
		t.Errorf("AddToLock =\n%s\nwant\n%s", out, want)
	}
	writeText(t, abspath(root, bench.LockFile), "[[locked]]\ndataset = 3\n")
	if _, err := bench.AddToLock(root, e); err == nil || !strings.Contains(err.Error(), "locked[0].dataset") {
		t.Errorf("AddToLock to a broken lock: %v, want its problem", err)
	}
	symlink(outside(t, root, "lock", ""), bench.LockFile)(t, root)
	if _, err := bench.AddToLock(root, e); err == nil {
		t.Error("AddToLock through a symbolic link: no error")
	}
}

func TestLockEntryTOML(t *testing.T) {
	e := bench.LockEntry{Dataset: "a/v1", Files: map[string]string{"instances.jsonl": "b", "dataset.toml": "a"}}
	want := "[[locked]]\ndataset = \"a/v1\"\n[locked.files]\n\"dataset.toml\" = \"a\"\n\"instances.jsonl\" = \"b\"\n"
	if got := e.TOML(); got != want {
		t.Errorf("TOML() =\n%s\nwant\n%s", got, want)
	}
}

// Each change to a locked version fails loading, naming the file and the
// version; so do problems of the lock itself.
func TestLockRefusesChanges(t *testing.T) {
	zero := strings.Repeat("0", 64)
	runCases(t, []hostileCase{
		{"a locked file edited", locked(replace(a1Instances, `"level": 1`, `"level": 2`)),
			want{a1Instances, 0, "", "differs from the published dataset version alpha/v1: its sha256 is "}},
		{"a locked manifest edited", locked(replace(a2Manifest, `title = "`, `title = "New `)),
			want{a2Manifest, 0, "", "differs from the published dataset version alpha/v2"}},
		{"a file added to a locked version", locked(writeFile("datasets/alpha/v1/README.md", "notes\n")),
			want{"datasets/alpha/v1/README.md", 0, "", "is not a file of the published dataset version alpha/v1"}},
		{"a locked file removed", locked(removeFile(a1Instances)),
			want{a1Instances, 0, "", "is missing from the published dataset version alpha/v1"}},
		{"a locked version removed", locked(func(t *testing.T, root string) {
			t.Helper()
			if err := os.RemoveAll(abspath(root, "datasets/alpha/v2")); err != nil {
				t.Fatal(err)
			}
		}),
			want{bench.LockFile, 17, "locked[1].dataset", "locks the published dataset version alpha/v2, but data/datasets/alpha/v2/ is missing"}},
		{"a locked file swapped for a link", locked(func(t *testing.T, root string) {
			t.Helper()
			symlink(outside(t, root, "instances.jsonl", readGood(t, a1Instances)), a1Instances)(t, root)
		}),
			want{a1Instances, 0, "", "is missing from the published dataset version alpha/v1"}},
		{"the lock is a link", symlink("/dev/null", bench.LockFile),
			want{bench.LockFile, 0, "", "is a symbolic link"}},
		{"the lock misplaced", writeFile("datasets/alpha/"+bench.LockFile, ""),
			want{"datasets/alpha/" + bench.LockFile, 0, "", "misplaced: datasets.lock.toml belongs in data/datasets.lock.toml"}},
		{"a malformed hash", writeFile(bench.LockFile, "[[locked]]\ndataset = \"alpha/v1\"\n[locked.files]\n\"dataset.toml\" = \"abc\"\n"),
			want{bench.LockFile, 4, "locked[0].files.dataset.toml", "want the 64 lowercase hexadecimal digits"}},
		{"an unknown file name", writeFile(bench.LockFile, "[[locked]]\ndataset = \"alpha/v1\"\n[locked.files]\n\"dataset.toml\" = \""+zero+"\"\n\"x.sh\" = \""+zero+"\"\n"),
			want{bench.LockFile, 5, "locked[0].files.x.sh", `"x.sh" is not a file a dataset folder holds`}},
		{"no manifest locked", writeFile(bench.LockFile, "[[locked]]\ndataset = \"alpha/v1\"\n[locked.files]\n\"instances.jsonl\" = \""+zero+"\"\n"),
			want{bench.LockFile, 3, "locked[0].files", "does not lock dataset.toml"}},
		{"a malformed dataset", writeFile(bench.LockFile, "[[locked]]\ndataset = \"../alpha\"\nfiles = {}\n"),
			want{bench.LockFile, 2, "locked[0].dataset", "want name/version"}},
		{"a version locked twice", writeFile(bench.LockFile, strings.Repeat("[[locked]]\ndataset = \"alpha/v1\"\nfiles = { \"dataset.toml\" = \""+zero+"\" }\n", 2)),
			want{bench.LockFile, 5, "locked[1].dataset", "locks alpha/v1 again (see locked[0])"}},
		{"an unknown key", writeFile(bench.LockFile, "[[locked]]\ndataset = \"alpha/v1\"\nsha = \"x\"\n"),
			want{bench.LockFile, 3, "locked[0].sha", `unknown key "sha"`}},
	})
}

// The attack: a pull request weakens a test of a published
// instance. One assert of the shipped example/v2 made vacuous fails both
// the site's loading and cmd/eval's.
func TestShippedLockRefusesAWeakenedTest(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(filepath.Join(root, "datasets"), os.DirFS(filepath.Join("..", "data", "datasets"))); err != nil {
		t.Fatal(err)
	}
	writeText(t, filepath.Join(root, bench.LockFile), readText(t, filepath.Join("..", "data", bench.LockFile)))
	if data, err := bench.Load(context.Background(), root); err != nil || len(data.Unlocked) != 0 {
		t.Fatalf("the shipped datasets with their lock: Unlocked %v, %v", data.Unlocked, err)
	}
	const rel = "datasets/example/v2/instances.jsonl"
	p := abspath(root, rel)
	s := readText(t, p)
	i := strings.Index(s, `\n+    assert `)
	if i < 0 {
		t.Fatal("no assert in the test patches of " + rel)
	}
	writeText(t, p, s[:i]+`\n+    assert True or `+s[i+len(`\n+    assert `):])
	for name, load := range map[string]func(context.Context, string) (*bench.Data, error){
		"Load": bench.Load, "LoadDatasets": bench.LoadDatasets,
	} {
		data, err := load(context.Background(), root)
		var ps bench.Problems
		if data != nil || !errors.As(err, &ps) {
			t.Fatalf("%s with a weakened test = %v; want problems", name, err)
		}
		wantProblem(t, ps, want{rel, 0, "", "differs from the published dataset version example/v2"})
	}
}

// Every shipped dataset version is published, with the entry
// `build --lock` prints for it.
func TestShippedLock(t *testing.T) {
	root := filepath.Join("..", "data")
	data, err := bench.Load(context.Background(), root)
	if err != nil {
		t.Fatalf("the shipped data/ does not load: %v", err)
	}
	if len(data.Unlocked) != 0 {
		t.Errorf("unpublished shipped dataset versions: %v; lock them in data/%s", data.Unlocked, bench.LockFile)
	}
	lock := readText(t, filepath.Join(root, bench.LockFile))
	for _, ds := range data.Datasets {
		e, err := bench.DatasetLock(root, ds.Key())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(lock, e.TOML()) {
			t.Errorf("data/%s lacks the entry of %s:\n%s", bench.LockFile, ds.Key(), e.TOML())
		}
	}
}

// An unpublished version loads and is named: a new dataset can be
// previewed before it is locked.
func TestLockUnpublished(t *testing.T) {
	root := copyGood(t)
	lockGood(t, root)
	rename("datasets/described/v1.0", "datasets/described/v2.0")(t, root)
	replace("datasets/described/v2.0/dataset.toml", `version = "v1.0"`, `version = "v2.0"`)(t, root)
	rename("submissions/described/v1.0", "submissions/described/v2.0")(t, root)
	data, err := bench.Load(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(data.Unlocked, " "), "described/v2.0"; got != want {
		t.Errorf("Unlocked = %q, want %q", got, want)
	}
}

// TestCheckDatasetFiles: a version's files checked before they are written
// load as they would from the data folder, give the lock entry
// DatasetLock gives once written, and every problem names the file as it
// would be named: nothing that passes can fail to load once written.
func TestCheckDatasetFiles(t *testing.T) {
	root := copyGood(t)
	files := map[string][]byte{
		"dataset.toml":    []byte(readGood(t, a1Manifest)),
		"instances.jsonl": []byte(readGood(t, a1Instances)),
	}
	ds, e, err := bench.CheckDatasetFiles(root, "alpha/v1", files)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Key() != "alpha/v1" || len(ds.Instances) == 0 || ds.Split("full") == nil {
		t.Errorf("checked version: %s, %d instances", ds.Key(), len(ds.Instances))
	}
	if want, err := bench.DatasetLock(root, "alpha/v1"); err != nil || e.TOML() != want.TOML() {
		t.Errorf("entry\n%s\nwant (%v)\n%s", e.TOML(), err, want.TOML())
	}
	// A repository that failed is reported with its stage and reason.
	withFailure := maps.Clone(files)
	withFailure["collection.json"] = []byte(`{"dataset": "alpha/v1", "seed": 0, "instances": 1, "repositories": [{"repository": "acme/widgets", "test_files": 0, "passing": 0, "candidates": 0, "traced": 0, "classified": 0, "with_p2p": 0, "masked": 0, "verified": 0, "kept": 0, "drops": [], "failure": {"stage": "env", "reason": "pip install exited 1 (whole text: env.log in the work folder)"}}]}`)
	if ds, _, err := bench.CheckDatasetFiles(root, "alpha/v1", withFailure); err != nil || ds.Collection.Repos[0].Failure.Stage != "env" {
		t.Errorf("a failed repository in collection.json: %v", err)
	}
	// A history-based method's funnel and pull requests are read back.
	withFunnel := maps.Clone(files)
	withFunnel["collection.json"] = []byte(`{"dataset": "alpha/v1", "seed": 0, "instances": 1, "repositories": [{"repository": "acme/widgets", "test_files": 0, "passing": 0, "candidates": 0, "traced": 0, "classified": 0, "with_p2p": 0, "masked": 0, "verified": 1, "kept": 1, "drops": [{"file": "", "pull": 4, "stage": "filter", "reason": "no test patch"}], "method": "release", "funnel": [{"step": "releases", "count": 2}, {"step": "kept", "count": 1}]}]}`)
	if ds, _, err := bench.CheckDatasetFiles(root, "alpha/v1", withFunnel); err != nil || ds.Collection.Repos[0].Funnel[1].Step != "kept" || ds.Collection.Repos[0].Drops[0].Subject() != "#4" {
		t.Errorf("a history method's collection.json: %v", err)
	}
	out := filepath.Join(root, "datasets", "alpha", "v9")
	for _, c := range []struct {
		name      string
		file      string
		text      string
		wantFile  string
		wantField string
		wantMsg   string
	}{
		// The reason of a drop holding pytest's output: one line only.
		{"reason over lines", "collection.json", `{"dataset": "alpha/v9", "seed": 0, "instances": 1, "repositories": [{"repository": "acme/widgets", "test_files": 1, "passing": 1, "candidates": 1, "traced": 0, "classified": 0, "with_p2p": 0, "masked": 0, "verified": 0, "kept": 0, "drops": [{"file": "t.py", "stage": "trace", "reason": "exit 1:\nE   ImportError"}]}]}`,
			"collection.json", "repositories[0].drops[0].reason", "control character"},
		{"failure reason over lines", "collection.json", `{"dataset": "alpha/v9", "seed": 0, "instances": 1, "repositories": [{"repository": "acme/widgets", "test_files": 0, "passing": 0, "candidates": 0, "traced": 0, "classified": 0, "with_p2p": 0, "masked": 0, "verified": 0, "kept": 0, "drops": [], "failure": {"stage": "env", "reason": "install:\nerror"}}]}`,
			"collection.json", "repositories[0].failure.reason", "control character"},
		{"a history method's funnel with a negative count", "collection.json", `{"dataset": "alpha/v9", "seed": 0, "instances": 1, "repositories": [{"repository": "acme/widgets", "test_files": 0, "passing": 0, "candidates": 0, "traced": 0, "classified": 0, "with_p2p": 0, "masked": 0, "verified": 1, "kept": 1, "drops": [{"file": "", "pull": 4, "stage": "filter", "reason": "no test patch"}], "method": "release", "funnel": [{"step": "releases", "count": 2}, {"step": "pull requests", "count": -1}]}]}`,
			"collection.json", "repositories[0].funnel[1].count", "cannot be negative"},
		{"an unknown method", "collection.json", `{"dataset": "alpha/v9", "seed": 0, "instances": 1, "repositories": [{"repository": "acme/widgets", "test_files": 0, "passing": 0, "candidates": 0, "traced": 0, "classified": 0, "with_p2p": 0, "masked": 0, "verified": 0, "kept": 0, "drops": [], "method": "scraped"}]}`,
			"collection.json", "repositories[0].method", `is "scraped"`},
		{"a repository reported twice by one method", "collection.json", `{"dataset": "alpha/v9", "seed": 0, "instances": 1, "repositories": [{"repository": "acme/widgets", "test_files": 0, "passing": 0, "candidates": 0, "traced": 0, "classified": 0, "with_p2p": 0, "masked": 0, "verified": 0, "kept": 0, "drops": [], "method": "release"}, {"repository": "acme/widgets", "test_files": 1, "passing": 1, "candidates": 1, "traced": 1, "classified": 1, "with_p2p": 1, "masked": 1, "verified": 1, "kept": 1, "drops": []}, {"repository": "acme/widgets", "test_files": 0, "passing": 0, "candidates": 0, "traced": 0, "classified": 0, "with_p2p": 0, "masked": 0, "verified": 0, "kept": 0, "drops": [], "method": "release"}]}`,
			"collection.json", "repositories[2]", "reports acme/widgets by method release again (repositories[0] did)"},
		{"a drop of a negative pull request", "collection.json", `{"dataset": "alpha/v9", "seed": 0, "instances": 1, "repositories": [{"repository": "acme/widgets", "test_files": 0, "passing": 0, "candidates": 0, "traced": 0, "classified": 0, "with_p2p": 0, "masked": 0, "verified": 0, "kept": 0, "drops": [{"file": "", "pull": -4, "stage": "filter", "reason": "x"}], "method": "release"}]}`,
			"collection.json", "repositories[0].drops[0].pull", "is -4"},
		{"failure without its stage", "collection.json", `{"dataset": "alpha/v9", "seed": 0, "instances": 1, "repositories": [{"repository": "acme/widgets", "test_files": 0, "passing": 0, "candidates": 0, "traced": 0, "classified": 0, "with_p2p": 0, "masked": 0, "verified": 0, "kept": 0, "drops": [], "failure": {"stage": "", "reason": "x"}}]}`,
			"collection.json", "repositories[0].failure.stage", "is empty"},
		{"manifest of another version", "dataset.toml", strings.Replace(readGood(t, a1Manifest), `version = "v1"`, `version = "v8"`, 1),
			"dataset.toml", "version", "is \"v8\" but the folder is v9/"},
		{"stray file", "notes.txt", "x", "notes.txt", "", "unexpected file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := maps.Clone(files)
			fs["dataset.toml"] = []byte(strings.Replace(readGood(t, a1Manifest), `version = "v1"`, `version = "v9"`, 1))
			fs[c.file] = []byte(c.text)
			_, _, err := bench.CheckDatasetFiles(root, "alpha/v9", fs)
			var ps bench.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("error %v, want problems", err)
			}
			for _, p := range ps {
				if p.File == filepath.Join(out, c.wantFile) && p.Field == c.wantField && strings.Contains(p.Msg, c.wantMsg) {
					return
				}
			}
			t.Errorf("no problem of %s, field %q, ~%q in:\n%v", filepath.Join(out, c.wantFile), c.wantField, c.wantMsg, err)
		})
	}
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		t.Errorf("checking wrote %s (%v)", out, err)
	}
}
