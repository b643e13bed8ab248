package patch

import (
	"path"
	"strings"
)

// The methods of the apply chain, as a result's apply_method records the
// one that worked (bench.ApplyMethods lists the same strings).
const (
	MethodGitApply     = "git apply"
	MethodGitApply3Way = "git apply --3way"
	MethodPatch        = "patch"
)

// Command is one step of the apply chain: the argv to run in the
// repository's folder inside the container, and the method it stands for.
type Command struct {
	Method string
	Argv   []string
	// LeavesRejects marks a step that can report success with part of the
	// change missing, or leave ".rej" files behind: after it, Leftovers
	// must find nothing for the step to count as applied.
	LeavesRejects bool
}

// ApplyCommands is the apply chain for the patch at file (a path inside
// the container), in the order the harness tries it, as SWE-bench's
// harness does; the first that exits 0 wins, and ResetCommand runs
// before each try after the first.
//
//   - `git apply -v`: exact, atomic (nothing is written unless every hunk
//     applies) and refuses unsafe paths itself; -v logs each file.
//   - `git apply -v --3way`: when the context has drifted but the patch's
//     "index" lines name blobs the repository has, a three-way merge
//     still applies it; a conflict exits non-zero (leaving markers the
//     reset removes).
//   - `patch --batch --forward --fuzz=5 -p1`: GNU patch tolerates up to 5
//     lines of context drift and miscounted trailing context, which
//     hand-edited agent patches often have. --batch never asks a
//     question; --forward skips a hunk that looks already applied instead
//     of reversing it (which --batch alone would do);
//     --no-backup-if-mismatch keeps it from leaving "file.orig" backups
//     in the tree the tests then run on. It is not atomic and writes
//     ".rej" files for hunks it could not apply: see Leftovers.
func ApplyCommands(file string) []Command {
	return []Command{
		{Method: MethodGitApply, Argv: []string{"git", "apply", "-v", file}},
		{Method: MethodGitApply3Way, Argv: []string{"git", "apply", "-v", "--3way", file}},
		{Method: MethodPatch, Argv: []string{"patch", "--batch", "--forward", "--fuzz=5", "-p1", "--no-backup-if-mismatch", "-i", file},
			LeavesRejects: true},
	}
}

// ResetCommand returns the tree to its commit between tries, since a
// failed try can leave a partial change (GNU patch is not atomic; a
// conflicting --3way leaves markers and a changed index): `git reset
// --hard -q` restores tracked files and the index, then `git clean -fdq`
// removes untracked files and folders except the folder keep, a path
// relative to the repository's top where the harness keeps its own files
// ("" keeps nothing more, nor does an absolute path: a folder outside the
// repository is never cleaned, and one inside cannot be told). Files the
// repository ignores (build output, an installed package's metadata) are
// kept, since -x is not given. The two commands are one argv, through
// sh, so the harness runs one step.
func ResetCommand(keep string) []string {
	script := "git reset --hard -q && git clean -fdq"
	if k := strings.Trim(path.Clean("/"+keep), "/"); k != "" && !strings.HasPrefix(keep, "/") {
		// Anchored, so only the folder at the top is kept.
		script += " -e " + shellQuote("/"+k+"/")
	}
	return []string{"sh", "-c", script}
}

// shellQuote quotes s for sh in single quotes; a quote inside is closed,
// escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// LeftoversCommand lists the untracked files of the tree, ignored ones
// included and NUL-separated, for Leftovers to read after the `patch`
// step: a repository's .gitignore may hide "*.rej".
func LeftoversCommand() []string {
	return []string{"git", "ls-files", "-z", "--others"}
}

// Leftovers reads the output of LeftoversCommand and returns the ".rej"
// (rejected hunks) and ".orig" (backups) files that the patch itself
// does not create. GNU patch exits 1 when it rejects a hunk, but a patch
// step that left any of these files is a failure whatever its exit
// status: part of the change is missing.
func Leftovers(lsFilesZ []byte, p *Patch) []string {
	own := map[string]bool{}
	for _, n := range Files(p) {
		own[n] = true
	}
	var out []string
	for n := range strings.SplitSeq(string(lsFilesZ), "\x00") {
		if (strings.HasSuffix(n, ".rej") || strings.HasSuffix(n, ".orig")) && !own[n] {
			out = append(out, n)
		}
	}
	return out
}
