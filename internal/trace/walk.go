package trace

import "sort"

// WalkInput is what Walk needs: the fail-to-pass file's graph, the tested
// top-level objects to start from, and what may not be removed.
type WalkInput struct {
	Graph *Graph
	Tops  []string
	// Kept reports a node that stays in the codebase: one that pass-to-pass
	// runs entered (removing it would break them). Walk does not go past
	// it, as the paper enqueues only extracted nodes.
	Kept func(id string) bool
	// Eligible reports whether a node may be extracted at all (library
	// code: not a test file, not a module's top-level code).
	Eligible func(n *Node) bool
	// Through reports a node the walk goes through without extracting it
	// (a function local to another: it goes only with its parent).
	Through func(n *Node) bool
	// Budget is the most lines to extract. The tops are extracted even
	// when they alone exceed it: they are the feature.
	Budget int
}

// WalkResult is what a walk chose.
type WalkResult struct {
	Tops      []string // the tops extracted, sorted
	Extracted []string // every extracted node, tops included, sorted
	Kept      []string // nodes reached but kept, sorted
	Skipped   []string // nodes reached that may not be extracted, sorted
	Lines     int      // lines of the union of the extracted spans
	// Stopped says the walk ended on the budget: the next node would
	// have passed it.
	Stopped bool
}

// Walk goes breadth-first from the tops over the callees, as FeatureBench
// does: a node seen in pass-to-pass runs stays, any other eligible node is
// extracted and its callees visited next, until the queue is empty or the
// next node would take the extracted lines past the budget. Nested objects
// count once: a span inside an extracted span adds no lines. The order of
// visits is the sorted order of ids at each level, so a walk is
// reproducible.
func Walk(in WalkInput) WalkResult {
	var res WalkResult
	lines := map[string]map[int]bool{} // file -> extracted lines
	added := func(n *Node) int {
		fl := lines[n.File]
		c := 0
		for l := n.Start; l <= n.End && n.Start > 0; l++ {
			if !fl[l] {
				c++
			}
		}
		return c
	}
	take := func(n *Node) {
		fl := lines[n.File]
		if fl == nil {
			fl = map[int]bool{}
			lines[n.File] = fl
		}
		for l := n.Start; l <= n.End && n.Start > 0; l++ {
			if !fl[l] {
				fl[l] = true
				res.Lines++
			}
		}
	}
	visited := map[string]bool{}
	var queue []*Node
	tops := append([]string(nil), in.Tops...)
	sort.Strings(tops)
	for _, id := range tops {
		n := in.Graph.Node(id)
		if n == nil || visited[id] {
			continue
		}
		visited[id] = true
		switch {
		case in.Kept != nil && in.Kept(id):
			res.Kept = append(res.Kept, id)
		case in.Eligible != nil && !in.Eligible(n), in.Through != nil && in.Through(n):
			res.Skipped = append(res.Skipped, id)
		default:
			take(n)
			res.Tops = append(res.Tops, id)
			res.Extracted = append(res.Extracted, id)
			queue = append(queue, n)
		}
	}
walk:
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		callees := append([]string(nil), n.Callees...)
		sort.Strings(callees)
		for _, c := range callees {
			if visited[c] {
				continue
			}
			visited[c] = true
			cn := in.Graph.Node(c)
			switch {
			case in.Kept != nil && in.Kept(c):
				res.Kept = append(res.Kept, c)
				continue
			case in.Through != nil && in.Through(cn):
				queue = append(queue, cn)
				continue
			case in.Eligible != nil && !in.Eligible(cn):
				res.Skipped = append(res.Skipped, c)
				continue
			}
			if res.Lines+added(cn) > in.Budget {
				res.Stopped = true
				break walk
			}
			take(cn)
			res.Extracted = append(res.Extracted, c)
			queue = append(queue, cn)
		}
	}
	sort.Strings(res.Extracted)
	sort.Strings(res.Kept)
	sort.Strings(res.Skipped)
	return res
}
