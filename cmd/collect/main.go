// Command collect is reserved: its issue has not landed yet.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprint(os.Stderr, usage)
	os.Exit(2)
}

const usage = `usage: collect REPO

Turns a Python repository into verified task instances (dynamic tracing,
dependency graph, masking, post-verification, problem statements) and writes
a versioned dataset into data/datasets/.

Not implemented yet: this command lands with its own issue.
`
