package collect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
)

// stageVersion stages a copy of a dataset version of bench's good tree in
// a new staging folder of the data folder, as writeDataset does.
func stageVersion(t *testing.T, dataDir, key string) string {
	t.Helper()
	stage, err := os.MkdirTemp(dataDir, ".collect-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(stage) })
	src := filepath.Join("..", "..", "bench", "testdata", "good", "datasets", filepath.FromSlash(key))
	if err := os.CopyFS(filepath.Join(stage, "datasets", filepath.FromSlash(key)), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return stage
}

// A written version is published with it: the lock gains its entry, and
// the data folder loads with every version locked.
func TestPublishLocks(t *testing.T) {
	ctx := context.Background()
	dataDir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(filepath.Join(dataDir, "datasets", "alpha"), 0o755); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(dataDir, bench.LockFile)
	out := func(key string) string { return filepath.Join(dataDir, "datasets", filepath.FromSlash(key)) }
	for _, key := range []string{"alpha/v1", "alpha/v2"} {
		if err := publish(ctx, stageVersion(t, dataDir, key), key, out(key)); err != nil {
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

	// A version the lock lists is never written again, even when its
	// folder is gone: nothing is moved into place.
	if err := os.RemoveAll(out("alpha/v1")); err != nil {
		t.Fatal(err)
	}
	err := publish(ctx, stageVersion(t, dataDir, "alpha/v1"), "alpha/v1", out("alpha/v1"))
	if err == nil || !strings.Contains(err.Error(), "locks alpha/v1 already") {
		t.Errorf("publishing a locked version again: %v", err)
	}
	if _, err := os.Lstat(out("alpha/v1")); !os.IsNotExist(err) {
		t.Errorf("the refused version was moved into place (%v)", err)
	}
	if again, _ := os.ReadFile(lockPath); string(again) != string(lock) {
		t.Errorf("the refused version changed the lock:\n%s", again)
	}
}
