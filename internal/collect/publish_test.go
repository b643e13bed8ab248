package collect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
)

// versionFiles are the files of a dataset version of bench's good tree,
// checked as writeDataset checks them, with the lock publishing them.
func versionFiles(t *testing.T, dataDir, key string) (map[string][]byte, []byte) {
	t.Helper()
	src := filepath.Join("..", "..", "bench", "testdata", "good", "datasets", filepath.FromSlash(key))
	files := map[string][]byte{}
	for _, name := range []string{bench.ManifestFile, bench.InstancesFile} {
		raw, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = raw
	}
	_, e, err := bench.CheckDatasetFiles(dataDir, key, files)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := bench.AddToLock(dataDir, e)
	if err != nil {
		t.Fatal(err)
	}
	return files, lock
}

// A written version is published with it: the lock gains its entry, and
// the data folder loads with every version locked. Nothing is left
// beside the data folder.
func TestPublishLocks(t *testing.T) {
	ctx := context.Background()
	project := t.TempDir()
	dataDir := filepath.Join(project, "data")
	if err := os.MkdirAll(filepath.Join(dataDir, "datasets", "alpha"), 0o755); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(dataDir, bench.LockFile)
	out := func(key string) string { return filepath.Join(dataDir, "datasets", filepath.FromSlash(key)) }
	for _, key := range []string{"alpha/v1", "alpha/v2"} {
		files, lock := versionFiles(t, dataDir, key)
		if err := publish(dataDir, key, out(key), files, lock); err != nil {
			t.Fatalf("publish %s: %v", key, err)
		}
		data, err := bench.LoadDatasets(ctx, dataDir)
		if err != nil {
			t.Fatalf("after publishing %s: %v", key, err)
		}
		if len(data.Unlocked) != 0 {
			t.Errorf("after publishing %s, unlocked: %v", key, data.Unlocked)
		}
		e, err := bench.DatasetLock(dataDir, key)
		if err != nil {
			t.Fatal(err)
		}
		if lock, _ := os.ReadFile(lockPath); !strings.Contains(string(lock), e.TOML()) {
			t.Errorf("the lock lacks %s's entry:\n%s", key, lock)
		}
	}
	lock, _ := os.ReadFile(lockPath)
	if strings.Count(string(lock), "# Published dataset versions") != 1 || strings.Count(string(lock), "[[locked]]") != 2 {
		t.Errorf("the lock after two versions:\n%s", lock)
	}
	if entries, _ := os.ReadDir(project); len(entries) != 1 {
		t.Errorf("beside the data folder: %v", entries)
	}

	// A version whose folder exists is never written again: nothing is
	// moved into place, the lock is not touched.
	files, _ := versionFiles(t, filepath.Join(t.TempDir(), "data"), "alpha/v1")
	if err := publish(dataDir, "alpha/v1", out("alpha/v1"), files, []byte("x")); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Errorf("publishing over alpha/v1: %v", err)
	}
	if again, _ := os.ReadFile(lockPath); string(again) != string(lock) {
		t.Errorf("the refused version changed the lock:\n%s", again)
	}
}

// A killed run's staging folder beside the data folder is removed by the
// next run; a live run's is not.
func TestSweepStages(t *testing.T) {
	project := t.TempDir()
	dataDir := filepath.Join(project, "data")
	dead := dataDir + stagePrefix + "4194305" // beyond Linux's pid_max: no such process
	live := dataDir + stagePrefix + "1"       // init
	for _, d := range []string{dead, live, filepath.Join(dataDir, "datasets")} {
		if err := os.MkdirAll(filepath.Join(d, "v1"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sweepStages(dataDir)
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Errorf("a killed run's folder stays (%v)", err)
	}
	if _, err := os.Lstat(live); err != nil {
		t.Errorf("a live run's folder went: %v", err)
	}
}
