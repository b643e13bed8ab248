package collect

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/featbench/featbench/internal/objid"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/mask"
)

const maskScriptName = mask.ScriptName

func maskScript() []byte { return mask.Script() }

// maskOut is a candidate's masked codebase, as patches.
type maskOut struct {
	// Patch is the gold solution: the masked codebase to the original.
	Patch string `json:"patch"`
	// TestPatch adds the fail-to-pass test file (level 1).
	TestPatch string `json:"test_patch"`
	// TestPatchL2 makes the test file import the tested objects from
	// agent_code (level 2); "" when level 2 is not made.
	TestPatchL2 string `json:"test_patch_l2,omitempty"`
	// MaskPatch takes the original codebase to the masked one (Patch
	// reversed, as git writes it): level 2 grades with the package masked.
	MaskPatch string `json:"mask_patch,omitempty"`
	// Level2Problem is why level 2 cannot be made of this candidate.
	Level2Problem string           `json:"level2_problem,omitempty"`
	Lines         int              `json:"lines"`     // lines the gold patch adds
	Files         int              `json:"files"`     // files it changes
	Functions     int              `json:"functions"` // objects removed
	Interfaces    []mask.Interface `json:"interfaces"`
	Result        *mask.Result     `json:"result"`
	// Tops are the tested objects removed: the walk's, less those an
	// error made masking keep (Protected, with the other objects kept).
	Tops      []string `json:"tops"`
	Protected []string `json:"protected,omitempty"`
	// Described are the removed objects described beside the tops because
	// code that stays reaches them by name (the statement is complete).
	Described []string `json:"described,omitempty"`
	// P2PGone are pass-to-pass tests the masked codebase no longer has:
	// tests parametrized over what masking removed (python-semver's
	// test_docstrings, one test per public function). They test the
	// feature, not what must keep working, so they are left out of
	// PASS_TO_PASS.
	P2PGone []string `json:"p2p_gone,omitempty"`
	// Reason is why the candidate was dropped here; "" when it was not.
	Reason string `json:"reason,omitempty"`
}

// wantLevel reports whether the repository's instances of a level are made.
func (r *repoRun) wantLevel(l int) bool {
	for _, x := range r.rc.Levels {
		if x == l {
			return true
		}
	}
	return false
}

// topNames are the module-level names of the tops: a function's or
// class's own, a method's class.
func topNames(tops []string) []string {
	seen := map[string]bool{}
	for _, id := range tops {
		_, q, _, err := objid.Parse(id)
		if err == nil {
			first, _, _ := strings.Cut(q, ".")
			seen[first] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// alive is the candidates not dropped yet: their files, in order, and
// each by its file.
func (r *repoRun) alive() ([]string, map[string]*candidate) {
	var items []string
	byFile := map[string]*candidate{}
	for _, c := range r.cands {
		if c.alive() {
			items = append(items, c.File)
			byFile[c.File] = c
		}
	}
	return items, byFile
}

// stageMask masks each candidate's codebase in a container and takes the
// patches from git.
func (r *repoRun) stageMask(ctx context.Context) error {
	items, byFile := r.alive()
	var mu sync.Mutex
	err := r.forEach(ctx, items, "mask.log", func(ctx context.Context, get func() (*box, error), file string) error {
		c := byFile[file]
		req := mask.Request{Remove: slices.Clone(c.walk.Result.Extracted), Describe: slices.Clone(c.walk.Result.Tops), ProtectFiles: append([]string{c.File}, c.p2p.Files...)}
		if r.wantLevel(2) {
			req.Level2 = &mask.Level2{TestFile: c.File, Package: r.rc.ImportName, Names: topNames(c.walk.Result.Tops)}
		}
		d := digest("mask", recipe, maskRecipe, r.env.Image, req, c.p2p.Files, r.rc.ImportName, mask.Script())
		out, _, err := memo(r, d, file, get, func(b *box) (maskOut, error) {
			out, reason, err := r.maskOne(ctx, b, c, req)
			if reason != "" {
				// A drop is an output too: stored, it is not tried again
				// with the same inputs.
				out = maskOut{Reason: reason}
			}
			return out, err
		})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if out.Reason != "" {
			r.drop(c, StageMask, 0, out.Reason)
			return nil
		}
		c.mask = out
		return nil
	})
	if err != nil {
		return err
	}
	n := 0
	for _, c := range r.cands {
		if c.alive() {
			n++
		}
	}
	r.logf("masked %d candidates", n)
	return nil
}

// maxMaskTries bounds how many times masking is tried again with objects
// an error named kept.
const maxMaskTries = 8

// errorNames finds the names an import or collection error is about, or
// that the masker says must stay (a total_ordering class's last ordering
// method).
var errorNames = regexp.MustCompile(`cannot import name '(\w+)'|has no attribute '(\w+)'|name '(\w+)' is not defined|: keep '(\w+)'`)

// maskOne masks one candidate. When the masked codebase does not import or
// the pass-to-pass files do not collect, the extracted objects the error
// names are kept and masking is tried again (FeatureBench protects the
// objects named in such errors too): a name can be reached in ways the
// trace does not see, such as a re-export through another package's star
// import. A reason is a drop; an error, a failure of the machinery.
func (r *repoRun) maskOne(ctx context.Context, b *box, c *candidate, req mask.Request) (maskOut, string, error) {
	var protected, extra []string
	for try := 1; ; try++ {
		out, reason, text, err := r.maskTry(ctx, b, c, req)
		if err == nil && reason == "" && out.Result != nil && len(out.Result.Undescribed) > 0 {
			// Removed objects that what stays reaches by name must be in
			// the statement: described too, and masked again.
			u := out.Result.Undescribed
			if try == maxMaskTries {
				return out, fmt.Sprintf("statement incomplete: %s is removed, %s reaches it, and the statement does not describe it", u[0].ID, u[0].ReachedBy), nil
			}
			for _, x := range u {
				if !slices.Contains(req.Describe, x.ID) {
					req.Describe = append(req.Describe, x.ID)
					extra = append(extra, x.ID)
				}
			}
			if err := r.remask(ctx, b, &req); err != nil {
				return out, "", err
			}
			continue
		}
		if err != nil || reason == "" {
			out.Protected, out.Described = protected, extra
			out.Tops = slices.DeleteFunc(slices.Clone(req.Describe), func(id string) bool { return slices.Contains(extra, id) })
			return out, reason, err
		}
		names := map[string]bool{}
		for _, m := range errorNames.FindAllStringSubmatch(text, -1) {
			for _, g := range m[1:] {
				if g != "" {
					names[g] = true
				}
			}
		}
		var keep []string
		req.Remove = slices.DeleteFunc(req.Remove, func(id string) bool {
			_, q, _, err := objid.Parse(id)
			if err == nil && names[q[strings.LastIndex(q, ".")+1:]] {
				keep = append(keep, id)
				return true
			}
			return false
		})
		if len(keep) == 0 || try == maxMaskTries {
			return out, reason, nil
		}
		protected = append(protected, keep...)
		req.Describe = slices.DeleteFunc(req.Describe, func(id string) bool { return slices.Contains(keep, id) })
		if len(req.Describe) == 0 {
			return out, reason + " (and every tested object it names must stay)", nil
		}
		if err := r.remask(ctx, b, &req); err != nil {
			return out, "", err
		}
	}
}

// remask puts the box back to the original codebase for another masking
// try with req.
func (r *repoRun) remask(ctx context.Context, b *box, req *mask.Request) error {
	if req.Level2 != nil {
		req.Level2.Names = topNames(req.Describe)
	}
	if err := b.reset(ctx); err != nil {
		return err
	}
	if err := b.c.CopyIn(ctx, fbDir, scripts()); err != nil {
		return fmt.Errorf("copying the scripts into the container: %w", err)
	}
	return nil
}

// maskTry is one masking attempt. text is the error output that made it
// fail, for the names it holds.
func (r *repoRun) maskTry(ctx context.Context, b *box, c *candidate, req mask.Request) (out maskOut, reason, text string, err error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return out, "", "", err
	}
	if err := b.c.CopyIn(ctx, fbDir, []container.File{{Path: "mask-request.json", Data: raw}}); err != nil {
		return out, "", "", fmt.Errorf("copying the mask request: %w", err)
	}
	res, err := b.exec(ctx, repoDir, r.tout.TestFile, nil, mask.Command(fbDir+"/"+maskScriptName, fbDir+"/mask-request.json")...)
	if err != nil {
		return out, "", "", fmt.Errorf("masking: %w", err)
	}
	if res.ExitCode != 0 {
		// The exception, the traceback's last line (the whole output is in
		// the stage's log); the text goes back for the names it holds: one
		// may name an object that must stay, and masking is tried again.
		return out, "masking failed: " + lastLine(res.Stderr) + " (its output is in mask.log)", string(res.Stderr), nil
	}
	result, err := mask.ParseResult(res.Stdout)
	if err != nil {
		return out, "", "", err
	}
	out.Result = result
	out.Interfaces = result.Interfaces
	out.Functions = result.Functions
	if _, err := b.must(ctx, "removing the fail-to-pass test file", repoDir, 0, "rm", "-f", "--", c.File); err != nil {
		return out, "", "", err
	}
	imp, err := b.exec(ctx, repoDir, r.tout.TestFile, []string{"PYTHONDONTWRITEBYTECODE=1"}, "python3", "-c", "import "+r.rc.ImportName)
	if err != nil {
		return out, "", "", err
	}
	if imp.ExitCode != 0 {
		return out, "the masked codebase does not import: " + lastLine(imp.Stderr), string(imp.Stderr), nil
	}
	coll, err := b.exec(ctx, repoDir, r.tout.TestFile, []string{"PYTHONDONTWRITEBYTECODE=1"},
		append([]string{"python3", "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir=" + repoDir}, c.p2p.Files...)...)
	if err != nil {
		return out, "", "", err
	}
	if coll.ExitCode != 0 {
		text := string(coll.Stdout) + string(coll.Stderr)
		return out, "the pass-to-pass files do not collect on the masked codebase: " + firstErrorLine(text), text, nil
	}
	out.P2PGone = r.p2pGone(c, string(coll.Stdout))
	if len(out.P2PGone) > 0 {
		b.logf("pass-to-pass tests the masked codebase no longer has, left out of PASS_TO_PASS: %s", strings.Join(out.P2PGone, ", "))
	}
	git := []string{"git", "-c", "core.quotepath=false", "diff", "--no-color", "--no-ext-diff", "--no-renames"}
	// Reversed (masked to original), with the prefixes swapped back so
	// that the patch reads a/ to b/ as any other.
	rev := append(append([]string(nil), git...), "-R", "--src-prefix=b/", "--dst-prefix=a/")
	gold, err := b.must(ctx, "taking the gold patch", repoDir, 0, append(append([]string(nil), rev...), "--", ".", ":(exclude)"+c.File)...)
	if err != nil {
		return out, "", "", err
	}
	test, err := b.must(ctx, "taking the test patch", repoDir, 0, append(append([]string(nil), rev...), "--", c.File)...)
	if err != nil {
		return out, "", "", err
	}
	fwd, err := b.must(ctx, "taking the mask patch", repoDir, 0, append(append([]string(nil), git...), "--", ".", ":(exclude)"+c.File)...)
	if err != nil {
		return out, "", "", err
	}
	out.Patch, out.TestPatch, out.MaskPatch = string(gold.Stdout), string(test.Stdout), string(fwd.Stdout)
	if out.Patch == "" {
		return out, "masking removed nothing", "", nil
	}
	out.Lines, out.Files = patchStats(out.Patch)
	out.Level2Problem = result.Level2Problem
	if req.Level2 != nil && result.Level2Test != nil {
		if err := b.c.CopyIn(ctx, repoDir+"/"+path.Dir(c.File), []container.File{{Path: path.Base(c.File), Data: []byte(*result.Level2Test)}}); err != nil {
			return out, "", "", fmt.Errorf("writing the level 2 test file: %w", err)
		}
		l2, err := b.must(ctx, "taking the level 2 test patch", repoDir, 0, append(append([]string(nil), git...), "--", c.File)...)
		if err != nil {
			return out, "", "", err
		}
		out.TestPatchL2 = string(l2.Stdout)
	}
	return out, "", "", nil
}

// maskRecipe is the version of the mask stage's output: 2 added P2PGone.
const maskRecipe = 2

// p2pGone lists the passing tests of c's pass-to-pass files that the
// masked codebase's collection (`pytest --collect-only -q` output) no
// longer lists. A file whose collection lists no id (a -v in the
// project's addopts makes a tree of it) is left as it is: nothing tells.
func (r *repoRun) p2pGone(c *candidate, collected string) []string {
	files, _ := parseCollection(collected)
	var gone []string
	for _, f := range c.p2p.Files {
		ids := files[f]
		if len(ids) == 0 {
			continue
		}
		for _, id := range r.runs[f].Passed {
			if !slices.Contains(ids, id) {
				gone = append(gone, id)
			}
		}
	}
	return gone
}

// patchStats counts the lines a patch adds and the files it changes.
func patchStats(p string) (lines, files int) {
	for _, l := range strings.Split(p, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			files++
		case strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "+"):
			lines++
		}
	}
	return lines, files
}

// firstErrorLine is the first line of pytest's output that names an
// error, else its last line.
func firstErrorLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "Error") && !strings.HasPrefix(l, "=") {
			return firstLine(strings.TrimSpace(strings.TrimPrefix(l, "E ")))
		}
	}
	return lastLine([]byte(s))
}

func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return firstLine(s)
}
