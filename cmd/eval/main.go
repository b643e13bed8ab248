// Command eval is reserved: its issue has not landed yet.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprint(os.Stderr, usage)
	os.Exit(2)
}

const usage = `usage: eval PREDICTIONS

Grades agent predictions in Docker containers and writes per-instance results
and leaderboard submissions into data/submissions/.

Not implemented yet: this command lands with its own issue.
`
