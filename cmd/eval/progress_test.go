package main

import "testing"

// TestLostWhat: a retried attempt's progress line names the node a swarm
// lost, from the report's retried as the swarm words it.
func TestLostWhat(t *testing.T) {
	for retried, want := range map[string]string{
		"node fu24nqycrtos (vm, unix:///run/featbench-swarm/node2.sock) was lost (cannot be reached (dial unix: connection refused)): the container or its engine is gone: featbench-eval-1a2b: the container stopped": "node fu24nqycrtos (vm, unix:///run/featbench-swarm/node2.sock) was lost",
		"service featbench-eval-1a2b: node u6411iqq2e9b was lost (the manager reports down): the container or its engine is gone":                                                                                      "node u6411iqq2e9b was lost",
		"on node fu24nqycrtos (vm, unix:///run/featbench-swarm/node2.sock), which still works: the container or its engine is gone: featbench-eval-1a2b: the container is gone":                                        "its container was lost",
	} {
		if got := lostWhat(retried); got != want {
			t.Errorf("lostWhat(%q) = %q, want %q", retried, got, want)
		}
	}
}
