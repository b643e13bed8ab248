package infer

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/atomicfile"
	"github.com/featbench/featbench/internal/bm25"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/integrity"
	"github.com/featbench/featbench/internal/llm"
	"github.com/featbench/featbench/internal/meter"
	"github.com/featbench/featbench/internal/patch"
	"github.com/featbench/featbench/internal/tokens"
)

// Prompt mode is FEA-Bench's inference setting (paper 004, section 4.2):
// no agent, one request to the model with the statement and code as
// context, whose answer becomes the prediction. The request goes through
// the metering proxy as an agent's do, so its tokens and cost are measured
// the same way.

// Contexts of prompt mode.
const (
	ContextOracle = "oracle" // the files the gold patch touches
	ContextBM25   = "bm25"   // the repository's files ranked by BM25 against the statement
)

// Answer formats prompt mode asks for.
const (
	AnswerDiff  = "diff"  // one unified diff
	AnswerFiles = "files" // the whole text of each file changed or added
)

// AnswerError is the failure mode of a prompt whose answer could not be
// made a change: no diff or file in it, a diff git does not apply, a path
// outside the repository.
const AnswerError = "AnswerError"

// Prompt configures prompt mode (Config.Prompt).
type Prompt struct {
	Context string // ContextOracle or ContextBM25
	// Budget is the most tokens the prompt may take, as tokens.Estimate
	// counts them: files are added while they fit (FEA-Bench: 27K).
	Budget    int
	MaxOutput int    // the answer's token limit, sent as max_tokens; 0: the server's
	Answer    string // AnswerDiff or AnswerFiles
	Timeout   time.Duration
}

// maxContextFile is the largest file put in a prompt: larger ones are
// data, not code to read.
const maxContextFile = 512 << 10

// promptInfer is infer for prompt mode: the starting point in a container
// of the environment image, the context read from it, one request through
// the meter, the answer applied and diffed as an agent's work is.
func promptInfer(ctx context.Context, cfg Config, in *bench.Instance, ls *executor.Lease, rec *Record, hlog, traj io.Writer, dir string) ([]byte, error) {
	a, p := cfg.Agent, cfg.Prompt
	image := a.Image[evaluate.ImageKey(cfg.Dataset, in)]
	if image == "" {
		return nil, fmt.Errorf("no environment image for %s", evaluate.ImageKey(cfg.Dataset, in))
	}
	m, err := meter.New(meter.Upstream{URL: a.upstream(), API: a.API, Key: a.Key, Timeout: p.Timeout},
		cfg.Prices, meter.Limits{Turns: a.MaxTurns, Tokens: a.MaxTokens, Cost: a.MaxCost}, traj)
	if err != nil {
		return nil, err
	}
	defer func() { measured(rec, m.Totals()) }()
	hctx, cancel := context.WithTimeout(ctx, p.Timeout+harnessGrace)
	defer cancel()
	box, err := ls.Start(hctx, container.Spec{ // under the run's lease
		Image: image, Name: "featbench-infer", WorkDir: "/", Limits: agentLimits(cfg.Container),
		Labels: map[string]string{
			evaluate.LabelProject: "1", evaluate.LabelKind: "infer", evaluate.LabelRun: cfg.Meta.RunID, evaluate.LabelTask: in.InstanceID,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("starting a container from %s: %w", image, err)
	}
	defer box.Remove()
	work, err := evaluate.StartingPoint(hctx, box, cfg.Dataset, in, hlog)
	if err != nil {
		return nil, fmt.Errorf("reaching the starting point: %w", err)
	}
	setup := "set -e\nmkdir -p " + filepath.Dir(baseGitDir) + " && chmod 700 " + filepath.Dir(baseGitDir) +
		"\ngit clone -q --bare --no-hardlinks " + work + " " + baseGitDir + "\n"
	if err := step(hctx, box, hlog, "/", "taking the starting point's copy", "sh", "-c", setup); err != nil {
		return nil, err
	}
	files, err := baseFiles(hctx, box, work)
	if err != nil {
		return nil, err
	}
	ctxFiles, err := pickContext(p, in, files)
	if err != nil {
		return nil, err
	}
	prompt := BuildPrompt(p, in, ctxFiles)
	fmt.Fprintf(hlog, "prompt: %s context, %d files (%s), about %d tokens of a budget of %d\n\n",
		p.Context, len(ctxFiles), strings.Join(contextPaths(ctxFiles), ", "), tokens.Estimate(prompt), p.Budget)

	// The meter on the loopback of this machine; the client speaks
	// OpenAI's chat completions to it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the meter: %w", err)
	}
	sctx, cancelServe := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- m.Serve(sctx, l) }()
	var stopOnce sync.Once
	stopServe := func() { // its request answered and recorded
		stopOnce.Do(func() {
			cancelServe()
			<-served
		})
	}
	defer stopServe()
	client, err := llm.New(llm.Config{Endpoint: "http://" + l.Addr().String(), Model: a.Model, MaxTokens: p.MaxOutput,
		Timeout: p.Timeout, Retries: -1}, func(string) string { return "" }, &http.Client{})
	if err != nil {
		return nil, err
	}
	cctx, stopChat := context.WithCancel(hctx)
	defer stopChat()
	chatDone := make(chan struct{})
	downFound := watchUpstream(ctx, m, stopChat, chatDone)
	started := time.Now()
	if cfg.Progress != nil && cfg.ProgressEvery > 0 {
		go working(cfg, in.InstanceID, m, started, chatDone)
	}
	reply, err := client.Chat(cctx, []llm.Message{{Role: "user", Content: prompt}})
	rec.Seconds = time.Since(started).Seconds()
	close(chatDone)
	stopServe()
	if d := upstreamDown(ctx, m, downFound(), hlog); d != nil && ctx.Err() == nil {
		return nil, d // not the instance's outcome: the run stops
	}
	if werr := atomicfile.Write(filepath.Join(dir, AgentLogFile), []byte(reply.Content)); werr != nil {
		return nil, &evaluate.SaveError{Err: werr}
	}
	tot := m.Totals()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case tot.Limit != "":
		rec.FailureMode = tot.Limit
		return []byte{}, m.Err()
	case err != nil && hctx.Err() != nil:
		rec.FailureMode = AgentTimeout
		return []byte{}, m.Err()
	case err != nil:
		rec.FailureMode, rec.Error = UpstreamError, err.Error()
		return []byte{}, m.Err()
	}
	if err := applyAnswer(hctx, box, hlog, work, p.Answer, reply.Content); err != nil {
		rec.FailureMode, rec.Error = AnswerError, err.Error()
		fmt.Fprintf(hlog, "the answer was not applied: %v\n", err)
		return []byte{}, m.Err()
	}
	dctx, cancelDiff := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancelDiff()
	diffed, n, dropped, err := diff(dctx, box, hlog, work, in)
	if err != nil {
		return nil, err
	}
	rec.FilesChanged, rec.Dropped = n, dropped
	return diffed, m.Err()
}

// ContextFile is a file put in the prompt.
type ContextFile struct {
	Path string
	Text string
}

func contextPaths(fs []ContextFile) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Path
	}
	return out
}

// baseFiles reads the tracked text files of the starting point: git
// archive of its only commit, each file at most maxContextFile, binary
// files (a NUL, or not UTF-8) left out.
func baseFiles(ctx context.Context, box executor.Box, work string) (map[string]string, error) {
	res, err := box.Exec(ctx, []string{"git", "-c", "core.quotepath=false", "archive", "--format=tar", "HEAD"},
		container.ExecOptions{Timeout: 5 * time.Minute, WorkDir: work, MaxOutput: 256 << 20})
	if err != nil {
		return nil, fmt.Errorf("reading the starting point's files: %w", err)
	}
	if res.ExitCode != 0 || res.Truncated {
		return nil, fmt.Errorf("reading the starting point's files: git archive exited %d%s: %s", res.ExitCode,
			map[bool]string{true: " (more than 256 MiB)"}[res.Truncated], lastLines(string(res.Stderr), 3))
	}
	return readTar(res.Stdout)
}

func readTar(data []byte) (map[string]string, error) {
	out := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the starting point's files: %w", err)
		}
		if h.Typeflag != tar.TypeReg || h.Size > maxContextFile {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", h.Name, err)
		}
		if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
			continue
		}
		out[h.Name] = string(b)
	}
}

// pickContext chooses the files of the prompt. Oracle: the files the gold
// patch changes that exist at the base, in the patch's order. BM25: the
// README and the files defining the new components first (FEA-Bench gives
// them always), then the other Python files but tests, ranked by BM25
// against the statement. Files are taken while the prompt stays within the
// budget; one that does not fit is skipped and smaller ones after it may.
func pickContext(p *Prompt, in *bench.Instance, files map[string]string) ([]ContextFile, error) {
	used := tokens.Estimate(BuildPrompt(p, in, nil)) - tokens.Estimate(noFiles) + tokens.Estimate(filesHeader) + budgetSlack
	var out []ContextFile
	taken := map[string]bool{}
	take := func(pth string) {
		text, ok := files[pth]
		if !ok || taken[pth] {
			return
		}
		cost := tokens.Estimate(fileBlock(pth, text))
		if p.Budget > 0 && used+cost > p.Budget {
			return
		}
		used += cost
		taken[pth] = true
		out = append(out, ContextFile{Path: pth, Text: text})
	}
	switch p.Context {
	case ContextOracle:
		gold, err := patch.Parse([]byte(in.Patch))
		if err != nil {
			return nil, fmt.Errorf("%s: the gold patch: %w", in.InstanceID, err)
		}
		for _, f := range patch.Files(gold) {
			take(f)
		}
	case ContextBM25:
		var readme []string
		for pth := range files {
			if !strings.Contains(pth, "/") && strings.HasPrefix(strings.ToUpper(pth), "README") {
				readme = append(readme, pth)
			}
		}
		slices.Sort(readme)
		for _, r := range readme {
			take(r)
		}
		for _, c := range in.Components {
			take(c.File)
		}
		var docs []bm25.Doc
		for _, pth := range sortedKeys(files) {
			if strings.HasSuffix(pth, ".py") && !integrity.IsTest(in, pth) {
				docs = append(docs, bm25.Doc{ID: pth, Text: pth + "\n" + files[pth]})
			}
		}
		for _, s := range bm25.New(docs).Rank(in.ProblemStatement) {
			if s.Score <= 0 {
				break
			}
			take(s.ID)
		}
	default:
		return nil, fmt.Errorf("unknown context %q (want %s or %s)", p.Context, ContextOracle, ContextBM25)
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// fileBlock is how a file is shown in the prompt.
func fileBlock(pth, text string) string {
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return "----- " + pth + " -----\n" + text + "----- end of " + pth + " -----\n\n"
}

// What the prompt says before its files, or instead of them.
const (
	filesHeader = "Files of the repository as they are now, each between a line naming it and a line ending it:\n\n"
	noFiles     = "(No file of the repository is shown.)\n\n"
)

// budgetSlack is kept free of a budget: the estimate of a whole prompt can
// exceed the sum of its parts' by a token where two parts meet.
const budgetSlack = 8

// BuildPrompt is the one request of prompt mode: the task, the files, and
// how to answer.
func BuildPrompt(p *Prompt, in *bench.Instance, files []ContextFile) string {
	var b strings.Builder
	b.WriteString("You are changing a Python repository to implement the request below. You cannot run anything: read the request and the code, then answer once with the whole change.\n\n")
	b.WriteString("# Request\n\n")
	b.WriteString(strings.TrimSpace(in.ProblemStatement))
	b.WriteString("\n\n# Code\n\n")
	if len(files) == 0 {
		b.WriteString(noFiles)
	} else {
		b.WriteString(filesHeader)
		for _, f := range files {
			b.WriteString(fileBlock(f.Path, f.Text))
		}
	}
	b.WriteString("# Answer\n\n")
	switch p.Answer {
	case AnswerFiles:
		b.WriteString("For every file you change or add, write a line `File: path/from/the/root.py` and, right after it, the file's whole new text in a fenced code block. Write out every file in full: a file you leave out stays as it is. Do not change the tests.\n")
	default:
		b.WriteString("Answer with one unified diff that `git apply` accepts, in a fenced ```diff block: paths from the repository's root with a/ and b/ prefixes, three lines of context around each change, new files from /dev/null. Do not change the tests.\n")
	}
	return b.String()
}

var (
	fence     = regexp.MustCompile("(?m)^```([A-Za-z0-9_+-]*)[^\\n]*\\n")
	fileLabel = regexp.MustCompile(`(?m)^[^\w\n]*(?:File|file|FILE)[ \t]*:[ \t]*` + "`?" + `([^\s` + "`" + `*]+)` + "`?" + `[^\w\n]*$`)
)

// fencedBlock is one fenced code block of an answer.
type fencedBlock struct {
	lang, body string
	start      int // where its opening fence begins
}

// fencedBlocks finds the fenced blocks of an answer in order. An
// unterminated block runs to the end.
func fencedBlocks(s string) []fencedBlock {
	var out []fencedBlock
	at := 0
	for {
		m := fence.FindStringSubmatchIndex(s[at:])
		if m == nil {
			return out
		}
		open, bodyStart := at+m[0], at+m[1]
		lang := s[at+m[2] : at+m[3]]
		end := strings.Index(s[bodyStart:], "\n```")
		body := ""
		if end < 0 {
			body, at = s[bodyStart:], len(s)
		} else {
			body, at = s[bodyStart:bodyStart+end+1], bodyStart+end+4
		}
		out = append(out, fencedBlock{lang: lang, body: body, start: open})
		if at >= len(s) {
			return out
		}
	}
}

// AnswerDiffs is the diff an answer gives: its ```diff or ```patch blocks,
// or blocks that read as a diff, joined; or the answer itself when it is a
// bare diff.
func AnswerDiffs(answer string) string {
	var parts []string
	for _, b := range fencedBlocks(answer) {
		if b.lang == "diff" || b.lang == "patch" || strings.HasPrefix(b.body, "diff --git ") || strings.HasPrefix(b.body, "--- ") {
			parts = append(parts, b.body)
		}
	}
	if len(parts) == 0 && (strings.HasPrefix(answer, "diff --git ") || strings.HasPrefix(answer, "--- ")) {
		parts = append(parts, answer)
	}
	return strings.Join(parts, "")
}

// AnswerFilesOf is the whole files an answer gives: each fenced block
// right after a "File: path" line, by path (the last block of a path
// wins).
func AnswerFilesOf(answer string) (map[string]string, error) {
	out := map[string]string{}
	labels := fileLabel.FindAllStringSubmatchIndex(answer, -1)
	for _, b := range fencedBlocks(answer) {
		var name string
		for _, l := range labels {
			if l[1] <= b.start && strings.TrimSpace(answer[l[1]:b.start]) == "" {
				name = answer[l[2]:l[3]]
			}
		}
		if name == "" {
			continue
		}
		if err := checkAnswerPath(name); err != nil {
			return nil, err
		}
		out[name] = b.body
	}
	return out, nil
}

// checkAnswerPath refuses a path that leaves the repository or reaches
// its git folder.
func checkAnswerPath(p string) error {
	c := path.Clean(p)
	if p == "" || path.IsAbs(p) || c != p || c == "." || strings.HasPrefix(c, "../") || c == ".." || strings.ContainsAny(p, "\\\x00") {
		return fmt.Errorf("the answer names the path %q, which is not a clean path inside the repository", p)
	}
	for _, part := range strings.Split(c, "/") {
		if part == ".git" {
			return fmt.Errorf("the answer names the path %q, inside .git", p)
		}
	}
	return nil
}

// applyAnswer makes the answer a change of the work folder: the diff
// applied by git (as written, then with line counts recomputed and less
// context), or the files written.
func applyAnswer(ctx context.Context, box executor.Box, log io.Writer, work, format, answer string) error {
	d := AnswerDiffs(answer)
	files, ferr := AnswerFilesOf(answer)
	if format == AnswerFiles && len(files) > 0 || d == "" {
		if ferr != nil {
			return ferr
		}
		if len(files) == 0 {
			return errors.New("the answer holds no diff and no file")
		}
		var cf []container.File
		for _, pth := range sortedKeys(files) {
			cf = append(cf, container.File{Path: pth, Data: []byte(files[pth]), Mode: 0o644})
		}
		fmt.Fprintf(log, "writing %d files of the answer: %s\n", len(cf), strings.Join(sortedKeys(files), ", "))
		return box.CopyIn(ctx, work, cf)
	}
	parsed, err := patch.Parse([]byte(d))
	if err != nil {
		return fmt.Errorf("the answer's diff does not parse: %w", err)
	}
	for _, f := range patch.Files(parsed) {
		if err := checkAnswerPath(f); err != nil {
			return err
		}
	}
	if err := box.CopyIn(ctx, "/run/featbench", []container.File{{Path: "answer.diff", Data: []byte(d), Mode: 0o644}}); err != nil {
		return err
	}
	var last string
	for _, args := range [][]string{{"--whitespace=nowarn"}, {"--recount", "--whitespace=nowarn", "-C1"}} {
		argv := append(append([]string{"git", "apply"}, args...), "/run/featbench/answer.diff")
		res, err := box.Exec(ctx, argv, container.ExecOptions{Timeout: time.Minute, WorkDir: work})
		fmt.Fprintf(log, "$ (cd %s && %s)\nexit %d\n%s%s\n", work, strings.Join(argv, " "), res.ExitCode, res.Stdout, res.Stderr)
		if err != nil {
			return err
		}
		if res.ExitCode == 0 {
			return nil
		}
		last = lastLines(string(res.Stderr), 3)
	}
	return fmt.Errorf("git apply refused the answer's diff: %s", last)
}
