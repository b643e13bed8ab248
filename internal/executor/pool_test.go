package executor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
)

// calls records, per item, the loss each call of it was given.
type calls struct {
	mu sync.Mutex
	m  map[int][]error
}

func (c *calls) add(i int, lost error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[int][]error{}
	}
	c.m[i] = append(c.m[i], lost)
}

func (c *calls) of(i int) []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[i]
}

// TestEachRetriesLost: with workers bounding it, Each calls every item,
// once more (with the loss) an item whose container was lost, never a
// third time, and never again one that failed otherwise; started hears of
// each item in order. Each case is its own run: a failure cancels the
// others' ctx, and with it their retry.
func TestEachRetriesLost(t *testing.T) {
	p := NewPool(nil, 2, container.Limits{})
	if p.Admits() {
		t.Fatal("a pool without an executor admits by room")
	}
	ctx := context.Background()

	t.Run("lost once", func(t *testing.T) {
		var c calls
		var mu sync.Mutex
		var started []int
		err := p.Each(ctx, 5, func(_ context.Context, i int, lost error) error {
			c.add(i, lost)
			if i == 1 && lost == nil {
				return fmt.Errorf("running the tests: %w", container.ErrLost)
			}
			return nil
		}, func(_ context.Context, i int) {
			mu.Lock()
			started = append(started, i)
			mu.Unlock()
		})
		if err != nil {
			t.Errorf("Each: %v, want the retry's success", err)
		}
		if got := c.of(1); len(got) != 2 || got[0] != nil || !errors.Is(got[1], container.ErrLost) {
			t.Errorf("item 1 (lost once): calls %v, want [<nil> lost]", got)
		}
		for i := range 5 {
			if i != 1 && len(c.of(i)) != 1 {
				t.Errorf("item %d: %d calls, want 1", i, len(c.of(i)))
			}
		}
		if len(started) != 5 {
			t.Errorf("started heard %v, want 0 to 4", started)
		}
		for i, s := range started {
			if s != i {
				t.Errorf("started heard %v: not in order", started)
				break
			}
		}
	})

	t.Run("lost twice", func(t *testing.T) {
		var c calls
		err := p.Each(ctx, 1, func(_ context.Context, i int, lost error) error {
			c.add(i, lost)
			return container.ErrLost
		}, nil)
		if !errors.Is(err, container.ErrLost) {
			t.Errorf("Each: %v, want the second loss", err)
		}
		if n := len(c.of(0)); n != 2 {
			t.Errorf("lost twice: %d calls, want 2", n)
		}
	})

	t.Run("another failure", func(t *testing.T) {
		var c calls
		boom := errors.New("pytest exited 4")
		err := p.Each(ctx, 1, func(_ context.Context, i int, lost error) error {
			c.add(i, lost)
			return boom
		}, nil)
		if !errors.Is(err, boom) || len(c.of(0)) != 1 {
			t.Errorf("another failure: %v after %d calls, want it after 1", err, len(c.of(0)))
		}
	})

	t.Run("nothing after a failure", func(t *testing.T) {
		// One worker: the items waiting for it when the first fails are
		// not started.
		var c calls
		boom := errors.New("the upstream refused the key")
		err := NewPool(nil, 1, container.Limits{}).Each(ctx, 3, func(_ context.Context, i int, lost error) error {
			c.add(i, lost)
			time.Sleep(10 * time.Millisecond) // the next item waits for the worker
			return boom
		}, nil)
		if !errors.Is(err, boom) || len(c.of(0)) != 1 || len(c.of(1)) != 0 || len(c.of(2)) != 0 {
			t.Errorf("%v; calls %d, %d, %d; want only the first", err, len(c.of(0)), len(c.of(1)), len(c.of(2)))
		}
	})
}

// TestSharedRetriesLost: Shared hands every item to exactly one of its
// workers, retries a lost one once on the same worker (which drops its
// container), and calls every worker's done.
func TestSharedRetriesLost(t *testing.T) {
	p := NewPool(nil, 3, container.Limits{})
	var c calls
	var mu sync.Mutex
	workers, dones := 0, 0
	err := p.Shared(context.Background(), 20, func() (func(context.Context, int, error) error, func()) {
		mu.Lock()
		workers++
		mu.Unlock()
		return func(_ context.Context, i int, lost error) error {
				c.add(i, lost)
				if i == 7 && lost == nil {
					return container.ErrLost
				}
				return nil
			}, func() {
				mu.Lock()
				dones++
				mu.Unlock()
			}
	})
	if err != nil {
		t.Fatalf("Shared: %v", err)
	}
	for i := range 20 {
		want := 1
		if i == 7 {
			want = 2
		}
		if n := len(c.of(i)); n != want {
			t.Errorf("item %d: %d calls, want %d", i, n, want)
		}
	}
	if workers != 3 || dones != 3 {
		t.Errorf("%d workers made, %d done, want 3 and 3", workers, dones)
	}
}

// roomFor admits n containers at a time and records the most it saw.
type roomFor struct {
	mu        sync.Mutex
	n, in     int
	free      chan struct{}
	admitted  int
	failAfter int // when > 0, the admissions after this many fail with fail
	fail      error
}

func (r *roomFor) Admit(ctx context.Context, _ container.Limits) (func(), error) {
	for {
		r.mu.Lock()
		if r.failAfter > 0 && r.admitted >= r.failAfter {
			r.mu.Unlock()
			return nil, r.fail
		}
		if r.in < r.n {
			r.in++
			r.admitted++
			r.mu.Unlock()
			return func() {
				r.mu.Lock()
				r.in--
				r.mu.Unlock()
				select {
				case r.free <- struct{}{}:
				default:
				}
			}, nil
		}
		r.mu.Unlock()
		select {
		case <-r.free:
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// TestEachAdmits: on an executor that admits by room, Each never runs
// more than it admits (workers do not apply), and an admission that
// fails (no node left) starts nothing more and is Each's error once the
// calls under way end.
func TestEachAdmits(t *testing.T) {
	adm := &roomFor{n: 2, free: make(chan struct{}, 1)}
	p := &Pool{adm: adm, workers: 10}
	if !p.Admits() {
		t.Fatal("a pool with an Admitter does not admit by room")
	}
	var c calls
	var mu sync.Mutex
	running, most := 0, 0
	if err := p.Each(context.Background(), 8, func(_ context.Context, i int, lost error) error {
		c.add(i, lost)
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return nil
	}, nil); err != nil {
		t.Fatalf("Each: %v", err)
	}
	if most > 2 || adm.admitted != 8 {
		t.Errorf("%d ran at once with room for 2, %d admitted of 8", most, adm.admitted)
	}
	for i := range 8 {
		if len(c.of(i)) != 1 {
			t.Errorf("item %d: %d calls", i, len(c.of(i)))
		}
	}

	gone := errors.New("no node left")
	adm = &roomFor{n: 2, free: make(chan struct{}, 1), failAfter: 3, fail: gone}
	p = &Pool{adm: adm, workers: 10}
	c = calls{}
	err := p.Each(context.Background(), 8, func(_ context.Context, i int, lost error) error {
		c.add(i, lost)
		return nil
	}, nil)
	if !errors.Is(err, gone) {
		t.Errorf("Each after the admission failed: %v, want %v", err, gone)
	}
	for i := range 8 {
		if ran := len(c.of(i)) > 0; ran != (i < 3) {
			t.Errorf("item %d ran: %v; want only the 3 admitted to run", i, ran)
		}
	}
}
