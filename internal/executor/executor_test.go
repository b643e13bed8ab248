package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/container"
)

// TestOpenLocal: the local backend is the engine itself, and closing it
// leaves the engine to its owner.
func TestOpenLocal(t *testing.T) {
	eng := new(container.Engine)
	for _, backend := range []string{"", "local"} {
		b, err := Open(context.Background(), config.Eval{Backend: backend}, eng, nil)
		if err != nil {
			t.Fatal(err)
		}
		l, ok := b.Executor.(local)
		if !ok || l.Engine != eng || b.Status != nil || b.Close() != nil {
			t.Errorf("backend %q: %+v", backend, b)
		}
		if _, admits := b.Executor.(Admitter); admits {
			t.Errorf("backend %q admits by room", backend)
		}
	}
	if _, err := Open(context.Background(), config.Eval{Backend: "kubernetes"}, eng, nil); err == nil || !strings.Contains(err.Error(), `"kubernetes"`) {
		t.Errorf("unknown backend: %v", err)
	}
}
