package bench

import (
	"fmt"
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Limits on everything under data/. Pull requests come from strangers and
// the site copies most fields into several pages, so every file and field
// has a bound, generous for real data (FeatureBench's longest problem
// statement is 123 KB) and far below what would hurt a build. Each
// problem message states the limit it enforces; CONTRIBUTING.md lists them.
const (
	// Files, in bytes. A file is read with a cap, never whole when larger.
	maxManifestFile    = 4 << 20   // dataset.toml
	maxInstancesFile   = 1 << 30   // instances.jsonl
	maxInstanceLine    = 16 << 20  // one line of instances.jsonl or predictions.jsonl
	maxResultsFile     = 256 << 20 // results.jsonl
	maxMetadataFile    = 256 << 10 // metadata.toml
	maxCheckedFile     = 1 << 20   // data/checked.toml
	maxPredictionsFile = 100 << 20 // predictions.jsonl
	maxArchiveFile     = 100 << 20 // logs.tar.gz, trajectories.tar.gz
	maxLogoFile        = 100 << 10 // data/logos/<key>.png or .jpg
	maxReadmeFile      = 256 << 10 // README.md

	// trajectories.tar.gz, expanded: the site reads it (the limits of
	// `eval validate`'s reading, evaluate.DefaultLogLimits).
	maxTrajectoryFile  = 64 << 20  // one trajectory.jsonl
	maxArchiveExpanded = 512 << 20 // all its files
	maxArchiveEntries  = 100_000

	// Instance fields, in bytes.
	maxProblemStatement = 1 << 20
	maxPatch            = 8 << 20 // patch and test_patch, each
	maxTestID           = 1 << 10
	maxTests            = 50_000 // FAIL_TO_PASS and PASS_TO_PASS, each
	maxRepoName         = 200    // repo, and a manifest's repository name
	maxBaseCommit       = 100
	maxImageName        = 300
	maxCreatedAt        = 64
	maxRepoSettings     = 64 << 10
	maxTopObjects       = 1_000
	maxTopObject        = 500
	maxPullNumber       = 1 << 30
	maxRelease          = 200
	maxComponents       = 1_000
	maxSignature        = 4_000
	maxDocstring        = 64 << 10
	maxCanaries         = 10_000

	// Result fields.
	maxFailureModes = 50
	maxFailureMode  = 100  // characters
	maxCount        = 1e12 // tokens, and a repository's gold statistics
	maxCost         = 1e6  // US dollars per instance

	// metadata.toml, in characters.
	maxSystemText    = 100 // name, scaffold, model
	maxOrganisations = 10
	maxOrganisation  = 100
	maxTags          = 20
	maxTag           = 40
	maxNotes         = 4_000
	maxSource        = 200 // source of reported figures
	maxFigureText    = 32  // a figure as written, e.g. "26.30" or "2.6M"
	maxURL           = 2_000
	maxAttempts      = 100
	maxDuration      = 1_000_000 // seconds an evaluation took, in a result

	// A repository's source and environment in dataset.toml.
	maxSourcePath = 500
	maxCommands   = 50
	maxCommand    = 2_000
	maxPackages   = 200
	maxPackage    = 100

	// dataset.toml, in characters.
	maxTitle            = 200
	maxDescription      = 10_000
	maxSplitDescription = 2_000
	maxSplits           = 100
	maxSplitSize        = 1_000_000
	maxRepositories     = 1_000
	maxLicense          = 100
	maxCitationKey      = 100
	maxCitationText     = 500 // title, venue
	maxAuthors          = 100
	maxAuthor           = 200
	maxCitationID       = 200 // eprint, doi
	minYear, maxYear    = 1900, 2100

	// data/checked.toml, in characters.
	maxAttestations = 10_000
	maxAttestedBy   = 100
	maxAttestNote   = 2_000

	// Logos.
	maxLogoSide = 512 // pixels, width and height
)

// textKind says which characters a text field may hold.
type textKind int

const (
	// oneLine text (names, tags) holds no control character at all, no
	// line break and no bidirectional override, which could make one
	// name look like another.
	oneLine textKind = iota
	// multiLine text (notes, descriptions) may also hold line breaks and
	// tabs.
	multiLine
)

// checkText reports why s is not acceptable text of at most max
// characters, or "" when it is.
func checkText(s string, max int, kind textKind) string {
	// Most text is printable ASCII: one pass over the bytes settles it.
	ascii := len(s) <= max
	for i := 0; ascii && i < len(s); i++ {
		ascii = 0x20 <= s[i] && s[i] < 0x7f
	}
	if ascii {
		return ""
	}
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	if n := utf8.RuneCountInString(s); n > max {
		return fmt.Sprintf("is %d characters; at most %d", n, max)
	}
	for _, r := range s {
		if kind == multiLine && (r == '\n' || r == '\t' || r == '\r') {
			continue
		}
		if badRune(r) {
			if kind == oneLine && (r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029') {
				return "holds a line break; it must be one line"
			}
			return fmt.Sprintf("holds the control character %U", r)
		}
	}
	return ""
}

// badRune reports control characters, line and paragraph separators, and
// the bidirectional embeddings, overrides and isolates.
func badRune(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' ||
		('\u202a' <= r && r <= '\u202e') || ('\u2066' <= r && r <= '\u2069')
}

// checkBytes reports why a field of len n bytes is too long, or "".
func checkBytes(n, max int) string {
	if n > max {
		return fmt.Sprintf("is %d bytes; at most %d", n, max)
	}
	return ""
}

// checkRange reports why v is not a finite number from lo to hi, as the
// end of a message that starts with the value ("is 150; "), or "".
func checkRange(v, lo, hi float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "want a finite number"
	case v < lo && lo == 0:
		return "it cannot be negative"
	case v < lo || v > hi:
		return fmt.Sprintf("want %s to %s", num(lo), num(hi))
	}
	return ""
}

// num writes a number in full, without an exponent.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
