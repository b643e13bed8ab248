// Package history reads a git repository on this machine, offline, as the
// source of the history-based collection methods (paper 003's
// release-driven FeatBench, 004's FEA-Bench): its tags with their dates are
// releases, its changelog's section for a tag is the release notes, and its
// merge and squash commits are pull requests, whose first-parent diff is the
// patch and whose message is the title and body. A JSON export of pull
// requests in GitHub's REST shape can stand in for the commit messages
// (ReadExport).
//
// Everything here is a stranger's: commit messages, tag names, changelog
// text and file names are bounded and cleaned before anything else reads
// them, and git is run with the user's configuration out of the way, so
// that the same repository gives the same answers on any machine.
package history

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds of what is read from a repository.
const (
	// MaxMessage is the most of a commit message kept (the title and
	// body); the rest is cut with a note. A pull request's description
	// is a few KiB; a megabyte is an accident or an attack.
	MaxMessage = 64 << 10
	// MaxTitle is the most of a title kept, in bytes.
	MaxTitle = 300
	// MaxFile is the largest file read from a commit (a changelog).
	MaxFile = 8 << 20
	// MaxDiff is the largest diff read; a larger pull request is not a
	// task anyone reviews.
	MaxDiff = 16 << 20
)

// Git reads one repository (a work tree or a bare git directory) with the
// git command.
type Git struct {
	Dir string
}

// ErrTooLarge is wrapped by the errors of reads that passed their bound.
var ErrTooLarge = errors.New("larger than the bound")

// command is git with the user's and the system's configuration left out
// (a diff.noprefix or a log.showSignature there would change the output),
// in Dir.
func (g Git) command(ctx context.Context, args ...string) *exec.Cmd {
	full := append([]string{"-C", g.Dir, "-c", "safe.directory=*", "-c", "core.quotepath=off",
		"-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "-c", "log.showSignature=false"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"LC_ALL=C", "GIT_PAGER=cat", "GIT_OPTIONAL_LOCKS=0")
	return cmd
}

// run runs git and returns its output, at most limit bytes (0: no bound).
func (g Git) run(ctx context.Context, limit int64, args ...string) ([]byte, error) {
	cmd := g.command(ctx, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 4 << 10}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	var r io.Reader = out
	if limit > 0 {
		r = io.LimitReader(out, limit+1)
	}
	data, rerr := io.ReadAll(r)
	if limit > 0 && int64(len(data)) > limit {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("git %s: output %w of %d bytes", args[0], ErrTooLarge, limit)
	}
	werr := cmd.Wait()
	if rerr != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], rerr)
	}
	if werr != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = werr.Error()
		}
		return nil, fmt.Errorf("git %s in %s: %s", args[0], g.Dir, firstLine(msg))
	}
	return data, nil
}

type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

var hexHash = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// Resolve turns a revision (a tag, a branch, a hash) into its commit's
// full hash.
func (g Git) Resolve(ctx context.Context, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("revision %q starts with '-'", rev)
	}
	out, err := g.run(ctx, 1<<10, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", err
	}
	h := strings.TrimSpace(string(out))
	if !hexHash.MatchString(h) {
		return "", fmt.Errorf("git rev-parse %s: %q is not a commit hash", rev, h)
	}
	return h, nil
}

// IsAncestor reports whether commit a is an ancestor of b (or b itself).
func (g Git) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	cmd := g.command(ctx, "merge-base", "--is-ancestor", a, b)
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return false, nil
	}
	return false, fmt.Errorf("git merge-base --is-ancestor %s %s: %w", a, b, err)
}

// Commit is one commit as git stores it.
type Commit struct {
	Hash    string
	Parents []string
	// Date is the committer's date: when the commit reached the branch
	// (a pull request's merge), in UTC.
	Date time.Time
	// Message is the commit message, cleaned (Clean) and bounded
	// (MaxMessage).
	Message string
}

// Subject is the message's first line.
func (c *Commit) Subject() string {
	s, _, _ := strings.Cut(c.Message, "\n")
	return s
}

// RevList lists the commits `git rev-list` gives for the arguments (such as
// "TAG", "^OTHER"), newest first in topological order.
func (g Git) RevList(ctx context.Context, args ...string) ([]string, error) {
	out, err := g.run(ctx, 0, append([]string{"rev-list", "--topo-order"}, append(args, "--")...)...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// Commits reads the commits with these hashes, in the same order.
func (g Git) Commits(ctx context.Context, hashes []string) ([]Commit, error) {
	if len(hashes) == 0 {
		return nil, nil
	}
	cmd := g.command(ctx, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(hashes, "\n") + "\n")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 4 << 10}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	br := bufio.NewReader(out)
	commits := make([]Commit, 0, len(hashes))
	var rerr error
	for _, h := range hashes {
		c, err := readCommit(br, h)
		if err != nil {
			rerr = err
			break
		}
		commits = append(commits, c)
	}
	if rerr != nil {
		_ = cmd.Process.Kill()
	}
	_, _ = io.Copy(io.Discard, br)
	werr := cmd.Wait()
	if rerr != nil {
		return nil, rerr
	}
	if werr != nil {
		return nil, fmt.Errorf("git cat-file: %s", firstLine(strings.TrimSpace(stderr.String())+" "+werr.Error()))
	}
	return commits, nil
}

// maxObject bounds one commit object: its headers and a message of any
// size up to this are read (and the message then cut to MaxMessage).
const maxObject = 32 << 20

// readCommit reads one "<hash> commit <size>\n<object>\n" of cat-file's
// batch output.
func readCommit(br *bufio.Reader, want string) (Commit, error) {
	head, err := br.ReadString('\n')
	if err != nil {
		return Commit{}, fmt.Errorf("git cat-file: reading %s: %w", want, err)
	}
	f := strings.Fields(head)
	if len(f) != 3 || f[1] != "commit" {
		return Commit{}, fmt.Errorf("git cat-file: %s is not a commit (%s)", want, strings.TrimSpace(head))
	}
	size, err := strconv.Atoi(f[2])
	if err != nil || size < 0 || size > maxObject {
		return Commit{}, fmt.Errorf("git cat-file: commit %s has a size of %s bytes", want, f[2])
	}
	raw := make([]byte, size+1)
	if _, err := io.ReadFull(br, raw); err != nil {
		return Commit{}, fmt.Errorf("git cat-file: reading %s: %w", want, err)
	}
	return parseCommit(f[0], raw[:size])
}

// parseCommit reads a raw commit object: headers, a blank line, the
// message.
func parseCommit(hash string, raw []byte) (Commit, error) {
	c := Commit{Hash: hash}
	headers, msg, _ := bytes.Cut(raw, []byte("\n\n"))
	for _, line := range strings.Split(string(headers), "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "parent":
			c.Parents = append(c.Parents, val)
		case "committer":
			t, err := signatureTime(val)
			if err != nil {
				return c, fmt.Errorf("commit %s: committer %w", hash, err)
			}
			c.Date = t
		}
	}
	c.Message = Bound(Clean(string(msg)), MaxMessage)
	return c, nil
}

// signatureTime reads the time of "Name <email> 1700000000 +0100".
func signatureTime(sig string) (time.Time, error) {
	f := strings.Fields(sig[strings.LastIndexByte(sig, '>')+1:])
	if len(f) < 1 {
		return time.Time{}, fmt.Errorf("%q has no date", firstLine(sig))
	}
	sec, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q has no date", firstLine(sig))
	}
	return time.Unix(sec, 0).UTC(), nil
}

// Clean makes text safe to keep and show: valid UTF-8, line breaks as
// "\n", tabs kept, every other control character and bidirectional
// formatting character removed (a commit message can hold escape
// sequences that repaint a terminal, or right-to-left overrides that hide
// what a line says), trailing spaces and blank lines at either end trimmed.
func Clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r' || r == '\u2028' || r == '\u2029' || r == '\u0085':
			return '\n'
		case unicode.IsControl(r), unicode.In(r, unicode.Bidi_Control), r == '\uFEFF':
			return -1
		}
		return r
	}, s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// Bound cuts text to at most n bytes on a rune boundary, saying so.
func Bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const note = "\n[… cut: the text was longer than the bound]"
	cut := max(n-len(note), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}

// OneLine is text as one line: its first non-empty line, bounded.
func OneLine(s string, n int) string {
	for _, l := range strings.Split(Clean(s), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			if len(l) > n {
				cut := n
				for cut > 0 && !utf8.RuneStart(l[cut]) {
					cut--
				}
				l = l[:cut] + "…"
			}
			return l
		}
	}
	return ""
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// ReadFile reads a file of a commit; ok is false when the commit has no
// such file.
func (g Git) ReadFile(ctx context.Context, commit, path string) (data []byte, ok bool, err error) {
	if strings.ContainsAny(path, "\x00\n") || strings.HasPrefix(path, "/") {
		return nil, false, fmt.Errorf("path %q cannot be read from git", path)
	}
	// cat-file -e tells a missing file from an error.
	if err := g.command(ctx, "cat-file", "-e", commit+":"+path).Run(); err != nil {
		return nil, false, nil
	}
	out, err := g.run(ctx, MaxFile, "cat-file", "blob", commit+":"+path)
	if err != nil {
		return nil, true, err
	}
	return out, true, nil
}

// Files lists the files of a commit, by path.
func (g Git) Files(ctx context.Context, commit string) ([]string, error) {
	out, err := g.run(ctx, 0, "ls-tree", "-r", "-z", "--name-only", "--full-tree", commit)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// Diff is the diff from commit a to commit b as `git apply` takes it: a/
// and b/ prefixes, full index lines, no renames (each path once, as a
// deletion and an addition), no external diff or text conversion.
// Binary files appear as "Binary files … differ" sections, which Split
// leaves out.
func (g Git) Diff(ctx context.Context, a, b string) ([]byte, error) {
	return g.run(ctx, MaxDiff, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--full-index",
		"--src-prefix=a/", "--dst-prefix=b/", "--ignore-submodules=none", a, b, "--")
}
