package bench

import "github.com/featbench/featbench/internal/tomlstrict"

// Problem is one thing wrong with the data: where it is (file, line, field)
// and what is wrong, so that a submitter can fix it without guessing. It
// is the TOML decoder's, so that every file's problems read alike.
type Problem = tomlstrict.Problem

// Problems collects every problem found in one pass, so one run of
// `build --check` lists them all.
type Problems = tomlstrict.Problems
