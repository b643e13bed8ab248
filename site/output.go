package site

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/sync/errgroup"

	"github.com/featbench/featbench/internal/atomicfile"
)

// A build publishes its site by replacing the output folder as a whole:
// it writes a complete new site into a folder beside the output (the
// stage), hard-links from the published site each file whose content has
// not changed, and swaps the stage into place with one rename. A build
// that fails or is killed leaves the published site exactly as it was,
// and a reader never sees a mix of two builds.
//
// The previous site is not deleted but kept as the next build's stage
// (the spare, under .cache), with a list of the files it holds: the next
// build only replaces the files that differ and removes those it does not
// want. Deleting and recreating thousands of page folders at each build
// cost seconds of kernel time here, since ext4 without a journal scans
// past recently freed inodes for every folder it creates.
//
// What the last build published is recorded outside the output folder
// (see stateName), so that the record is never published: per file its
// content hash and the size, modification time and inode of the published
// copy. A published file is reused only while its stat still matches, so
// a page edited in place is written again.

const (
	// stagePrefix and asidePrefix name folders beside the output:
	// "<output>.stage-<pid>" holds the site being built (and, after the
	// swap, the previous site until it becomes the spare);
	// "<output>.old-<pid>" the previous site where the swap falls back to
	// two renames. Those of a process that is gone are removed.
	stagePrefix = ".stage-"
	asidePrefix = ".old-"
	// legacyStateFile is where builds before the stage kept their state:
	// inside the output folder, and so published. It marks a folder as
	// one of our sites; the next build drops it.
	legacyStateFile = ".featbench-build.json"
	// spareList lists, inside the spare, the files it holds; it is
	// removed before the spare, as the stage, is published.
	spareList = ".featbench-spare"
	// stateMagic is the first line of a state file; a file without it
	// is ignored and costs one full build.
	stateMagic = "featbench-build-state 3"
)

// fileRec is one published file: its content hash, the key of what it
// was rendered from (0 for none; see reuseKeyed), and the stat of the
// published copy when the build that wrote (or linked) it ended.
type fileRec struct {
	hash  uint64
	key   uint64
	size  int64
	mtime int64 // nanoseconds
	ino   uint64
}

type buildState struct {
	output string // the output folder, absolute: guards against a key collision
	inputs string // fingerprint of every input
	files  map[string]fileRec
}

// output writes one build's site into the stage and publishes it.
type output struct {
	final     string // the output folder, absolute, symlinks resolved
	stateFile string
	spareDir  string // where the previous site waits to be the next stage
	dir       string // the stage, once stage has made it
	prev      buildState
	spare     map[string]bool // files of the spare the stage started as; nil for a new stage
	dirs      sync.Map        // stage folders known to exist: made once each

	mu      sync.Mutex
	files   map[string]fileRec
	written int
	kept    int // pages reuseKeyed kept without their being rendered
}

// Test hooks: saved runs after each file of the stage is saved (an error
// fails the build there); noExchange makes the swap take its fall-back.
var (
	testHookSaved   func(rel string) error
	testNoExchange  bool
	errNoExchange   = errors.New("renameat2(RENAME_EXCHANGE) is not supported here")
	errNotOurOutput = errors.New("not a site this build wrote")
)

// openOutput reads the previous build's state for the output folder.
func openOutput(opts Options) (*output, error) {
	final, err := filepath.Abs(opts.outputDir())
	if err != nil {
		return nil, fmt.Errorf("resolving the output folder: %w", err)
	}
	// The stage must be on the output's file system: beside the folder a
	// symlinked output points to, not beside the link.
	if real, err := filepath.EvalSymlinks(final); err == nil {
		final = real
	}
	name := stateName(final)
	o := &output{
		final:     final,
		stateFile: filepath.Join(opts.stateDir(), name+".state"),
		spareDir:  filepath.Join(opts.stateDir(), name+".spare"),
		files:     map[string]fileRec{},
	}
	if st, err := readState(o.stateFile); err == nil && st.output == final {
		o.prev = st
	}
	return o, nil
}

// stateName names the state file and spare of an output folder: its name
// for whoever looks, and a hash of its absolute path to keep outputs apart.
func stateName(final string) string {
	sum := sha256.Sum256([]byte(final))
	return filepath.Base(final) + "-" + hex.EncodeToString(sum[:8])
}

// readState parses a state file: a header, then one line per file,
// "hash key size mtime ino rel" separated by tabs: the nothing-changed path
// reads it whole, so it is a format parsed without reflection.
func readState(path string) (buildState, error) {
	st := buildState{files: map[string]fileRec{}}
	raw, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	bad := fmt.Errorf("%s: not a build state file", path)
	lines := strings.Split(string(raw), "\n")
	if len(lines) < 3 || lines[0] != stateMagic {
		return st, bad
	}
	var ok1, ok2 bool
	st.output, ok1 = strings.CutPrefix(lines[1], "output\t")
	st.inputs, ok2 = strings.CutPrefix(lines[2], "inputs\t")
	if !ok1 || !ok2 {
		return st, bad
	}
	for _, line := range lines[3:] {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 6)
		if len(f) != 6 {
			return st, bad
		}
		var r fileRec
		var e [5]error
		r.hash, e[0] = strconv.ParseUint(f[0], 16, 64)
		r.key, e[1] = strconv.ParseUint(f[1], 16, 64)
		r.size, e[2] = strconv.ParseInt(f[2], 10, 64)
		r.mtime, e[3] = strconv.ParseInt(f[3], 10, 64)
		r.ino, e[4] = strconv.ParseUint(f[4], 10, 64)
		if errors.Join(e[:]...) != nil {
			return st, bad
		}
		st.files[f[5]] = r
	}
	return st, nil
}

func (st buildState) encode() []byte {
	var b strings.Builder
	b.Grow(64 + len(st.files)*96)
	fmt.Fprintf(&b, "%s\noutput\t%s\ninputs\t%s\n", stateMagic, st.output, st.inputs)
	for rel, r := range st.files {
		fmt.Fprintf(&b, "%x\t%x\t%d\t%d\t%d\t%s\n", r.hash, r.key, r.size, r.mtime, r.ino, rel)
	}
	return []byte(b.String())
}

// sweep removes what killed builds left beside the output folder (stages
// and previous sites whose process is gone) and the state of output
// folders that no longer exist. It runs on every build, up to date or
// not: a build killed while removing the previous site leaves its inputs
// unchanged.
func (o *output) sweep() error {
	for _, prefix := range []string{stagePrefix, asidePrefix} {
		old, _ := filepath.Glob(globEscape(o.final+prefix) + "*")
		for _, d := range old {
			pid, err := strconv.Atoi(strings.TrimPrefix(d, o.final+prefix))
			if err != nil || processAlive(pid) {
				continue // not ours, or another build's
			}
			if err := os.RemoveAll(d); err != nil {
				return fmt.Errorf("removing an unfinished build's folder: %w", err)
			}
		}
	}
	return nil
}

// globEscape quotes the pattern characters of a path for filepath.Glob.
func globEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// pruneStates removes the state files and spares of output folders that
// no longer exist (test and benchmark builds into temporary folders), so
// that .cache does not fill up with them.
func pruneStates(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if !strings.HasSuffix(e.Name(), ".state") || p == keep {
			continue
		}
		out, err := stateOutput(p)
		if err != nil {
			continue
		}
		if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) {
			_ = os.RemoveAll(strings.TrimSuffix(p, ".state") + ".spare")
			_ = os.Remove(p)
		}
	}
}

// stateOutput reads only the output folder named by a state file.
func stateOutput(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, 64<<10))
	magic, _ := r.ReadString('\n')
	line, _ := r.ReadString('\n')
	out, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "output\t")
	if strings.TrimSuffix(magic, "\n") != stateMagic || !ok || !filepath.IsAbs(out) {
		return "", fmt.Errorf("%s: not a build state file", path)
	}
	return out, nil
}

// upToDate reports whether the last build had the same inputs and every
// file it published is still there as it left it.
func (o *output) upToDate(inputs string) bool {
	if o.prev.inputs == "" || o.prev.inputs != inputs || len(o.prev.files) == 0 {
		return false
	}
	for rel, r := range o.prev.files {
		if !o.unchanged(rel, r) {
			return false
		}
	}
	return true
}

// unchanged reports whether the published copy of rel still has the
// stat the state recorded. Editing a file in place changes its
// modification time; replacing it, its inode.
func (o *output) unchanged(rel string, r fileRec) bool {
	fi, err := os.Lstat(filepath.Join(o.final, filepath.FromSlash(rel)))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return fi.Size() == r.size && fi.ModTime().UnixNano() == r.mtime && inode(fi) == r.ino
}

// stage makes the folder the new site is written into, beside the output
// folder, after checking that the output folder may be replaced: the
// spare when there is one, else a new folder.
func (o *output) stage() error {
	if err := o.replaceable(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.final), 0o755); err != nil {
		return fmt.Errorf("creating the output folder's parent: %w", err)
	}
	dir := o.final + stagePrefix + strconv.Itoa(os.Getpid())
	// A stage of ours can only exist if our pid was a killed build's.
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing an unfinished build's folder: %w", err)
	}
	o.dir = dir
	if list, err := os.ReadFile(filepath.Join(o.spareDir, spareList)); err == nil {
		// Moved, not used in place: a build killed from here on leaves
		// a stage that the next build removes, never a spare that is
		// not what its list says.
		if err := os.Rename(o.spareDir, dir); err == nil {
			if err := os.Remove(filepath.Join(dir, spareList)); err == nil {
				o.spare = map[string]bool{}
				for _, rel := range strings.Split(string(list), "\n") {
					if rel != "" {
						o.spare[rel] = true
					}
				}
				return nil
			}
			_ = os.RemoveAll(dir)
		}
	}
	if _, err := os.Lstat(o.spareDir); err == nil {
		// Unusable (no list, or on another file system): it would block
		// the next spare.
		if err := os.RemoveAll(o.spareDir); err != nil {
			return fmt.Errorf("removing the previous site: %w", err)
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("creating the stage folder: %w", err)
	}
	return nil
}

// replaceable refuses to replace an existing output folder that is not a
// site a build wrote: the swap drops whatever the folder held, so a
// site.output naming a folder of other files must fail, not empty it.
func (o *output) replaceable() error {
	fi, err := os.Lstat(o.final)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking the output folder: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("output %s is not a folder", o.final)
	}
	if len(o.prev.files) > 0 {
		return nil // the state says a build published it
	}
	ents, err := os.ReadDir(o.final)
	if err != nil {
		return fmt.Errorf("checking the output folder: %w", err)
	}
	if len(ents) == 0 {
		return nil
	}
	// No state (.cache was removed, or an older build kept its state in
	// the folder): the files every site of ours has.
	exists := func(rel string) bool {
		_, err := os.Lstat(filepath.Join(o.final, filepath.FromSlash(rel)))
		return err == nil
	}
	if exists(legacyStateFile) || exists("index.html") && exists("assets/site.js") {
		return nil
	}
	return fmt.Errorf("output folder %s holds files and is %w (no index.html and assets/site.js): each build replaces the whole folder, so set site.output to a new folder or empty this one", o.final, errNotOurOutput)
}

// abandon removes the stage of a build that failed: the published site
// is untouched.
func (o *output) abandon() {
	if o.dir != "" && o.dir != o.final {
		_ = os.RemoveAll(o.dir)
	}
}

// write stores one file of the site; rel is slash-separated, relative to
// the output folder.
func (o *output) write(rel string, data []byte) error {
	return o.writeContent(rel, content{data: data}, 0)
}

// writeLines stores a file given as lines, each followed by a newline,
// without joining them: a split's download is the size of the dataset.
func (o *output) writeLines(rel string, lines [][]byte) error {
	return o.writeContent(rel, content{lines: lines}, 0)
}

// reuseKeyed keeps the previous build's rel, without rendering it again,
// when that build rendered it from the same key (a hash of everything the
// page shows, and of the program) and the published copy is as it left
// it. It reports whether it did; if not, the caller renders the page and
// writes it with writeContent and the key.
func (o *output) reuseKeyed(rel string, key uint64) (bool, error) {
	return o.reuse(rel, key, true)
}

// reuse is reuseKeyed; a page it keeps counts among those kept without
// rendering when page says so (a copy of a file of data/ is no page).
func (o *output) reuse(rel string, key uint64, page bool) (bool, error) {
	if err := checkRel(rel); err != nil {
		return false, err
	}
	pub, ok := o.prev.files[rel]
	if !ok || key == 0 || pub.key != key || !o.unchanged(rel, pub) {
		return false, nil
	}
	if err := o.claim(rel); err != nil {
		return false, err
	}
	placed, err := o.place(rel, pub, true, nil, 0, key)
	o.mu.Lock()
	if placed && page {
		o.kept++
	} else if !placed && err == nil {
		delete(o.files, rel) // to be written
	}
	o.mu.Unlock()
	return placed, err
}

// claim reserves rel for one page.
func (o *output) claim(rel string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, dup := o.files[rel]; dup {
		return fmt.Errorf("two pages want to write %s", rel)
	}
	o.files[rel] = fileRec{} // the record follows
	return nil
}

// content is a file's bytes: data, or lines to end with newlines.
type content struct {
	data  []byte
	lines [][]byte
}

var newline = []byte{'\n'}

// hash is the xxHash of the bytes, the same whichever way they are given.
func (c content) hash() uint64 {
	if c.lines == nil {
		return xxhash.Sum64(c.data)
	}
	d := xxhash.New()
	for _, l := range c.lines {
		_, _ = d.Write(l)
		_, _ = d.Write(newline)
	}
	return d.Sum64()
}

// writeTo writes the bytes to w.
func (c content) writeTo(w io.Writer) error {
	if c.lines == nil {
		_, err := w.Write(c.data)
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	for _, l := range c.lines {
		_, _ = bw.Write(l)
		_ = bw.WriteByte('\n')
	}
	return bw.Flush()
}

// writeContent stores one file, rendered from key (0 for none).
func (o *output) writeContent(rel string, data content, key uint64) error {
	if err := checkRel(rel); err != nil {
		return err
	}
	if err := o.claim(rel); err != nil {
		return err
	}
	h := data.hash()
	pub, reusable := o.reusable(rel, h)
	_, err := o.place(rel, pub, reusable, &data, h, key)
	return err
}

// place puts rel in the stage: the published copy pub when reusable
// (already in the stage, or hard-linked), else data (of hash h) written
// anew. With no data, it reports false when the published copy cannot be
// used.
func (o *output) place(rel string, pub fileRec, reusable bool, data *content, h, key uint64) (bool, error) {
	path := filepath.Join(o.dir, filepath.FromSlash(rel))
	// What the spare holds at rel. It may share its inode with the
	// published file: it is replaced, never written into.
	var cur fs.FileInfo
	if o.spare != nil {
		cur, _ = os.Lstat(path)
	}
	var rec fileRec
	linked := false
	switch {
	case cur != nil && reusable && cur.Mode().IsRegular() && inode(cur) != 0 && inode(cur) == pub.ino:
		rec, linked = pub, true // already the published file
	case cur != nil:
		if err := os.RemoveAll(path); err != nil {
			return false, fmt.Errorf("replacing %s: %w", rel, err)
		}
	default:
		if dir := filepath.Dir(path); !o.known(dir) {
			if err := mkdir(dir); err != nil {
				return false, fmt.Errorf("creating folder for %s: %w", rel, err)
			}
			o.dirs.Store(dir, true)
		}
	}
	// A hard link costs a directory entry; writing the page again would
	// cost its bytes.
	if !linked && reusable && os.Link(filepath.Join(o.final, filepath.FromSlash(rel)), path) == nil {
		rec, linked = pub, true
	}
	if !linked {
		if data == nil {
			return false, nil
		}
		var err error
		if rec, err = writeNew(path, *data); err != nil {
			return false, err
		}
		rec.hash = h
	}
	rec.key = key
	o.mu.Lock()
	o.files[rel] = rec
	if !linked {
		o.written++
	}
	o.mu.Unlock()
	if testHookSaved != nil {
		return true, testHookSaved(rel)
	}
	return true, nil
}

// copySource places rel as a copy of a file of data/, which open opens
// and sizes (a submission's results, logs or predictions, published as
// they are): the kernel copies the bytes (copy_file_range), so the build
// neither reads them into memory nor hashes them, which for a small
// build's results.jsonl files was a tenth of its CPU. A copy, never a
// link: editing data/ changes nothing published until the next build.
// key is what the file was copied from (sourceKey): the next build keeps
// the copy while the key is the same.
func (o *output) copySource(rel string, open func() (*os.File, int64, error), key uint64) error {
	if err := checkRel(rel); err != nil {
		return err
	}
	if err := o.claim(rel); err != nil {
		return err
	}
	in, size, err := open()
	if err != nil {
		return err
	}
	defer in.Close()
	path := filepath.Join(o.dir, filepath.FromSlash(rel))
	if o.spare != nil {
		if _, err := os.Lstat(path); err == nil {
			if err := os.RemoveAll(path); err != nil {
				return fmt.Errorf("replacing %s: %w", rel, err)
			}
		}
	}
	if dir := filepath.Dir(path); !o.known(dir) {
		if err := mkdir(dir); err != nil {
			return fmt.Errorf("creating folder for %s: %w", rel, err)
		}
		o.dirs.Store(dir, true)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// One byte more than the size loading checked: a file that grew since
	// is refused rather than published longer.
	n, err := f.ReadFrom(io.LimitReader(in, size+1))
	if err == nil && n != size {
		err = fmt.Errorf("%s changed while the site was built (%d bytes, then %d): build again", in.Name(), size, n)
	}
	fi, err := statAndClose(f, err)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	o.mu.Lock()
	o.files[rel] = fileRec{key: key, size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: inode(fi)}
	o.written++
	o.mu.Unlock()
	if testHookSaved != nil {
		return testHookSaved(rel)
	}
	return nil
}

// sourceKey identifies a file of data/ as it is now, by its path and
// stat (an edit in place changes its modification time; a replacement,
// its inode), for copySource; 0 when it cannot be read.
func sourceKey(path string) uint64 {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	k := xxhash.Sum64String(fmt.Sprintf("source %s %d %d %d", path, fi.Size(), fi.ModTime().UnixNano(), inode(fi)))
	return max(k, 1)
}

// reusable reports whether the previous build published the same content
// at rel and the published copy is still as it left it, and returns its
// record.
func (o *output) reusable(rel string, h uint64) (fileRec, bool) {
	r, ok := o.prev.files[rel]
	if !ok || r.hash != h || !o.unchanged(rel, r) {
		return fileRec{}, false
	}
	return r, true
}

// mkdir creates dir and any missing parents. Most folders are new page
// folders in a parent that exists, so it tries Mkdir first: os.MkdirAll
// would stat the folder and its parent before, two system calls for each
// of thousands of pages.
func mkdir(dir string) error {
	err := os.Mkdir(dir, 0o755)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case errors.Is(err, fs.ErrExist):
		// A file of that name fails when the page is created in it.
		return nil
	}
	return err
}

func (o *output) known(dir string) bool {
	_, ok := o.dirs.Load(dir)
	return ok
}

// checkRel refuses an output path that could leave the output folder or
// that the state file cannot record.
func checkRel(rel string) error {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.ContainsAny(rel, "\\\t\n\r") {
		return fmt.Errorf("bad output path %q", rel)
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("bad output path %q", rel)
		}
	}
	return nil
}

// finish publishes the stage: it swaps it with the output folder, records
// the state, and keeps the previous site as the next build's stage. It
// returns how many files the previous build published that this one did
// not.
func (o *output) finish(ctx context.Context, inputs string) (removed int, err error) {
	for rel := range o.prev.files {
		if _, ok := o.files[rel]; !ok {
			removed++
		}
	}
	// The spare the stage started as holds files this site does not.
	for rel := range o.spare {
		if _, ok := o.files[rel]; ok {
			continue
		}
		path := filepath.Join(o.dir, filepath.FromSlash(rel))
		if err := os.RemoveAll(path); err != nil {
			return 0, fmt.Errorf("removing %s from the stage: %w", rel, err)
		}
		// Drop the folders that emptied, up to the stage.
		for dir := filepath.Dir(path); dir != o.dir && strings.HasPrefix(dir, o.dir); dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil {
				break
			}
		}
	}
	// The last moment a cancelled build can still leave everything as it
	// was.
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	old, err := o.swap()
	if err != nil {
		return 0, err
	}
	o.dir = o.final
	st := buildState{output: o.final, inputs: inputs, files: o.files}
	if err := writeAtomic(o.stateFile, st.encode()); err != nil {
		_ = os.RemoveAll(old)
		return removed, fmt.Errorf("recording build state: %w", err)
	}
	if old != "" {
		if err := o.keepSpare(old); err != nil {
			return removed, err
		}
	}
	if _, err := os.Lstat(o.spareDir); errors.Is(err, fs.ErrNotExist) {
		o.linkSpare()
	}
	pruneStates(filepath.Dir(o.stateFile), o.stateFile)
	return removed, nil
}

// linkSpare makes a spare when there was no previous site to keep (the
// first build into an output folder): the published files hard-linked into
// a new folder, their inodes shared, so that the next build starts from a
// stage that already holds them instead of linking every file of the site
// (0.7 s of kernel time at 4,000 pages, which took a rebuild after one
// change over a second). The spare only saves time: on any failure it is
// removed and the next build makes a new stage.
func (o *output) linkSpare() {
	// The stage's name, free again since the swap: a build killed here
	// leaves a folder that sweep removes.
	tmp := o.final + stagePrefix + strconv.Itoa(os.Getpid())
	if os.RemoveAll(tmp) != nil || os.Mkdir(tmp, 0o755) != nil {
		return
	}
	rels := make([]string, 0, len(o.files))
	var list strings.Builder
	for rel := range o.files {
		rels = append(rels, rel)
		list.WriteString(rel)
		list.WriteByte('\n')
	}
	// Sorted, a folder's files mostly follow one another.
	slices.Sort(rels)
	// Two at once, creating folders and links being kernel work that the
	// second CPU halves, but never in the same folder: creating an entry
	// takes its folder's lock, and two threads adding page folders to one
	// folder spun on that lock (while folders were slow to create, as
	// much CPU as creating them).
	// One makes the folders, in order, and hands each folder's files to
	// the other, which links them into it.
	type group struct {
		dir  string
		rels []string
	}
	groups := make(chan group, 64)
	var g errgroup.Group
	g.Go(func() error {
		defer close(groups)
		for i := 0; i < len(rels); {
			dir := path.Dir(rels[i])
			j := i + 1
			for j < len(rels) && path.Dir(rels[j]) == dir {
				j++
			}
			full := filepath.Join(tmp, filepath.FromSlash(dir))
			if dir != "." {
				if err := mkdir(full); err != nil {
					return err
				}
			}
			groups <- group{full, rels[i:j]}
			i = j
		}
		return nil
	})
	g.Go(func() error {
		var err error
		for gr := range groups {
			for _, rel := range gr.rels {
				if err == nil {
					err = os.Link(filepath.Join(o.final, filepath.FromSlash(rel)), filepath.Join(gr.dir, path.Base(rel)))
				}
			}
		}
		return err // after the channel is drained: the other never blocks
	})
	if g.Wait() != nil ||
		os.WriteFile(filepath.Join(tmp, spareList), []byte(list.String()), 0o644) != nil ||
		os.Rename(tmp, o.spareDir) != nil {
		_ = os.RemoveAll(tmp)
	}
}

// keepSpare keeps the previous site, now at old, as the next build's
// stage, with the list of its files; it removes it when what it holds is
// not known (no state from the build that wrote it) or it cannot be kept.
func (o *output) keepSpare(old string) error {
	var list strings.Builder
	for rel := range o.prev.files {
		list.WriteString(rel)
		list.WriteByte('\n')
	}
	if len(o.prev.files) > 0 &&
		os.WriteFile(filepath.Join(old, spareList), []byte(list.String()), 0o644) == nil &&
		os.Rename(old, o.spareDir) == nil {
		return nil
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("removing the previous site: %w", err)
	}
	return nil
}

// swap moves the stage into place and returns where the previous site
// went ("" when there was none).
func (o *output) swap() (string, error) {
	if _, err := os.Lstat(o.final); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(o.dir, o.final); err != nil {
			return "", fmt.Errorf("moving the new site into place: %w", err)
		}
		return "", nil
	}
	err := errNoExchange
	if !testNoExchange {
		err = exchange(o.dir, o.final)
	}
	if err == nil {
		return o.dir, nil // the stage's name now holds the previous site
	}
	if !errors.Is(err, errNoExchange) {
		return "", fmt.Errorf("swapping the new site into place: %w", err)
	}
	// Two renames: between them the output folder is missing for an
	// instant, but never partly built.
	aside := o.final + asidePrefix + strconv.Itoa(os.Getpid())
	if err := os.Rename(o.final, aside); err != nil {
		return "", fmt.Errorf("moving the previous site aside: %w", err)
	}
	if err := os.Rename(o.dir, o.final); err != nil {
		if rerr := os.Rename(aside, o.final); rerr != nil {
			return "", fmt.Errorf("moving the new site into place: %w (and restoring the previous site from %s: %v)", err, aside, rerr)
		}
		return "", fmt.Errorf("moving the new site into place: %w", err)
	}
	return aside, nil
}

// writeAtomic writes a file whole or not at all (atomicfile.Write),
// creating its folder.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating folder for %s: %w", path, err)
	}
	return atomicfile.Write(path, data)
}

// statAndClose stats f, unless err is already set, then closes it, and
// returns the first error. Stat before close: closing changes no time,
// and an open file saves a path lookup.
func statAndClose(f *os.File, err error) (fs.FileInfo, error) {
	var fi fs.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return fi, err
}
