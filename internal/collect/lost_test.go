package collect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/container"
)

// TestForEachLost: an item whose container is lost (a swarm's node gone)
// is done once more; lost again, it fails the stage with the loss. Other
// failures are not retried.
func TestForEachLost(t *testing.T) {
	var log bytes.Buffer
	var cfg config.Config
	cfg.Collect.Workers = 2
	r := &repoRun{o: Options{Config: cfg, Log: &log}, rc: config.Repo{Repository: "o/r"}}
	var mu sync.Mutex
	calls := map[string]int{}
	err := r.forEachPlain(context.Background(), []string{"a", "b", "c"}, func(_ context.Context, item string) error {
		mu.Lock()
		defer mu.Unlock()
		calls[item]++
		if item != "c" && calls[item] == 1 {
			return fmt.Errorf("running the tests: %w: its node is down", container.ErrLost)
		}
		return nil
	})
	if err != nil || calls["a"] != 2 || calls["b"] != 2 || calls["c"] != 1 {
		t.Errorf("err %v, calls %v", err, calls)
	}
	if !strings.Contains(log.String(), "o/r: a: the container was lost, once more in a fresh one") {
		t.Errorf("log:\n%s", log.String())
	}

	calls = map[string]int{}
	err = r.forEachPlain(context.Background(), []string{"a"}, func(context.Context, string) error {
		calls["a"]++
		return container.ErrLost
	})
	if !errors.Is(err, container.ErrLost) || calls["a"] != 2 {
		t.Errorf("lost twice: err %v after %d calls", err, calls["a"])
	}
	calls = map[string]int{}
	err = r.forEachPlain(context.Background(), []string{"a"}, func(context.Context, string) error {
		calls["a"]++
		return errors.New("pytest exited 4")
	})
	if err == nil || calls["a"] != 1 {
		t.Errorf("another failure: err %v after %d calls", err, calls["a"])
	}
}
