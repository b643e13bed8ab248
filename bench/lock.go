package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/featbench/featbench/internal/tomlstrict"
)

// LockFile is data/datasets.lock.toml: the SHA-256 of every file of each
// published dataset version. A published version never changes, so that
// a result graded on it means the same forever and no pull request can
// weaken an instance's tests: loading fails when a locked file differs,
// is added or is removed.
//
//	[[locked]]
//	dataset = "example/v2"            # name/version
//	[locked.files]                    # every file of the version's folder
//	"dataset.toml" = "…"              # its SHA-256, as sha256sum prints it
//	"instances.jsonl" = "…"
//
// A dataset version missing from the lock is unpublished: it loads, and
// Data.Unlocked names it. A data folder without a lock locks nothing.
const LockFile = "datasets.lock.toml"

// maxLockFile bounds data/datasets.lock.toml: about 300 bytes a version.
const maxLockFile = 4 << 20

// maxLocked bounds the versions one lock lists.
const maxLocked = 10_000

// lockHeader opens a lock that AddToLock creates.
const lockHeader = `# Published dataset versions: the SHA-256 of every file of each version
# folder under data/datasets/ (what sha256sum prints). A published version
# never changes: ` + "`go run ./cmd/build --check`" + ` fails when one of its files
# differs, is added or is removed; publish a new version instead.
# cmd/collect adds the entry of a version it writes; for one written by
# hand, ` + "`go run ./cmd/build --lock NAME/VERSION`" + ` prints it. Only maintainers
# change this file (CODEOWNERS; the submission workflow refuses a pull
# request from a fork that does).
`

// LockEntry is one published dataset version of the lock.
type LockEntry struct {
	Dataset string            `toml:"dataset"` // "name/version", Dataset.Key
	Files   map[string]string `toml:"files"`   // file name: lowercase hex SHA-256
}

type lockDoc struct {
	Locked []LockEntry `toml:"locked"`
}

// datasetFileLimit is what loading reads of a dataset file at most: a
// larger file is a problem already, and not worth hashing.
func datasetFileLimit(name string) int64 {
	switch name {
	case ManifestFile:
		return maxManifestFile
	case InstancesFile:
		return maxInstancesFile
	case CollectionFile:
		return maxCollectionFile
	}
	return maxReadmeFile
}

// checkLock compares each locked version's folder with its entry. It
// returns the dataset versions of the tree the lock does not list, and
// every problem: a file that differs, was added or removed names the file
// and the version, a version removed names the lock's entry.
func checkLock(t *tree) (unlocked []string, ps Problems) {
	if t.lock == nil {
		return nil, nil // no lock, nothing published (or not a regular file: listed)
	}
	folders := map[string]*folder{}
	for _, f := range t.datasets {
		folders[strings.TrimPrefix(f.rel, "datasets/")] = f
	}
	path := t.lock.path
	entries, kl, ps := readLock(path)
	if len(ps) > 0 {
		// Nothing is known to be published: every version stays unchecked
		// and the build fails on the lock's own problems.
		return nil, ps
	}
	locked := map[string]bool{}
	for i, e := range entries {
		field := fmt.Sprintf("locked[%d]", i)
		locked[e.Dataset] = true
		f := folders[e.Dataset]
		if f == nil {
			kl.Add(&ps, path, field+".dataset", "locks the published dataset version %s, but data/datasets/%s/ is missing: a published version is never removed", e.Dataset, e.Dataset)
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(e.Files)) {
			file := filepath.Join(f.path, name)
			en := f.file(name)
			if en == nil {
				ps.Add(file, 0, "", "is missing from the published dataset version %s (%s locks it, sha256 %s): a published version never changes; publish a new version instead", e.Dataset, LockFile, e.Files[name])
				continue
			}
			sum, err := sha256File(en.path, datasetFileLimit(name))
			if err != nil {
				ps = append(ps, readProblem(en.path, err))
				continue
			}
			if sum != e.Files[name] {
				ps.Add(file, 0, "", "differs from the published dataset version %s: its sha256 is %s, %s locks %s; a published version never changes; publish a new version instead", e.Dataset, sum, LockFile, e.Files[name])
			}
		}
		for _, name := range f.names {
			if _, ok := e.Files[name]; !ok {
				ps.Add(filepath.Join(f.path, name), 0, "", "is not a file of the published dataset version %s (%s does not lock it): a published version gains no files; publish a new version instead", e.Dataset, LockFile)
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(folders)) {
		if !locked[key] {
			unlocked = append(unlocked, key)
		}
	}
	return unlocked, ps
}

// readLock reads the lock and checks its own fields.
func readLock(path string) ([]LockEntry, keyLines, Problems) {
	raw, err := readFile(path, maxLockFile, nil)
	if err != nil {
		return nil, nil, Problems{readProblem(path, err)}
	}
	return parseLock(path, raw)
}

// parseLock decodes the lock read from path and checks its own fields.
func parseLock(path string, raw []byte) ([]LockEntry, keyLines, Problems) {
	var doc lockDoc
	kl, ps := decodeTOML(path, raw, &doc, nil)
	if len(ps) > 0 {
		return nil, nil, ps
	}
	if len(doc.Locked) > maxLocked {
		kl.Add(&ps, path, "locked", "holds %d dataset versions; at most %d", len(doc.Locked), maxLocked)
		return nil, nil, ps
	}
	first := map[string]string{}
	for i, e := range doc.Locked {
		field := fmt.Sprintf("locked[%d]", i)
		if err := checkDatasetKey(e.Dataset); err != nil {
			kl.Add(&ps, path, field+".dataset", "%v", err)
			continue
		}
		if prev := first[e.Dataset]; prev != "" {
			kl.Add(&ps, path, field+".dataset", "locks %s again (see %s)", e.Dataset, prev)
			continue
		}
		first[e.Dataset] = field
		if _, ok := e.Files[ManifestFile]; !ok {
			kl.Add(&ps, path, field+".files", "does not lock %s: every dataset version has one", ManifestFile)
		}
		for _, name := range slices.Sorted(maps.Keys(e.Files)) {
			f := field + ".files." + name
			if !datasetFile(name) {
				kl.Add(&ps, path, f, "%s is not a file a dataset folder holds (%s, %s, %s or %s)", tomlstrict.Quote(name), ManifestFile, InstancesFile, CollectionFile, ReadmeFile)
			} else if !sha256Hex.MatchString(e.Files[name]) {
				kl.Add(&ps, path, f, "is %s; want the 64 lowercase hexadecimal digits of the file's SHA-256", tomlstrict.Quote(e.Files[name]))
			}
		}
	}
	return doc.Locked, kl, ps
}

// checkDatasetKey reports why key is not "name/version", or nil.
func checkDatasetKey(key string) error {
	name, version, ok := strings.Cut(key, "/")
	if !ok {
		return fmt.Errorf("is %s; want name/version, e.g. \"example/v2\"", tomlstrict.Quote(key))
	}
	for _, p := range []string{name, version} {
		if err := CheckName(p); err != nil {
			return fmt.Errorf("is %s; want name/version, e.g. \"example/v2\": %w", tomlstrict.Quote(key), err)
		}
	}
	return nil
}

// sha256File hashes a regular file of at most limit bytes, opened as
// loading opens it: never through a symbolic link.
func sha256File(path string, limit int64) (string, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if size > limit {
		return "", &tooLarge{size, limit}
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, limit+1))
	if err != nil {
		return "", err
	}
	if n > limit {
		return "", &tooLarge{-1, limit}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// DatasetLock hashes the files of the dataset version key ("name/version")
// under root (the data folder) into its lock entry. Like loading, it
// refuses symbolic links and anything but regular files.
func DatasetLock(root, key string) (LockEntry, error) {
	if err := checkDatasetKey(key); err != nil {
		return LockEntry{}, fmt.Errorf("dataset version %w", err)
	}
	dir := root
	for _, p := range append([]string{"datasets"}, strings.Split(key, "/")...) {
		dir = filepath.Join(dir, p)
		if err := checkFolder(dir); err != nil {
			return LockEntry{}, fmt.Errorf("locking %s: %w", key, err)
		}
	}
	list, err := os.ReadDir(dir)
	if err != nil {
		return LockEntry{}, fmt.Errorf("locking %s: %w", key, err)
	}
	e := LockEntry{Dataset: key, Files: map[string]string{}}
	for _, d := range list {
		p := filepath.Join(dir, d.Name())
		switch {
		case !d.Type().IsRegular():
			return LockEntry{}, fmt.Errorf("locking %s: %s is %s: %s", key, p, modeName(d.Type()), notRegular)
		case !datasetFile(d.Name()):
			return LockEntry{}, fmt.Errorf("locking %s: %s: unexpected file: %s", key, p, layoutHint(strings.Split("datasets/"+key, "/")))
		}
		sum, err := sha256File(p, datasetFileLimit(d.Name()))
		if err != nil {
			return LockEntry{}, fmt.Errorf("locking %s: %s: %w", key, p, err)
		}
		e.Files[d.Name()] = sum
	}
	if e.Files[ManifestFile] == "" {
		return LockEntry{}, fmt.Errorf("locking %s: %s is missing", key, filepath.Join(dir, ManifestFile))
	}
	return e, nil
}

// TOML renders the entry as the block the lock holds, files sorted.
func (e LockEntry) TOML() string {
	var b strings.Builder
	b.WriteString("[[locked]]\n")
	fmt.Fprintf(&b, "dataset = %s\n", tomlString(e.Dataset))
	b.WriteString("[locked.files]\n")
	for _, name := range slices.Sorted(maps.Keys(e.Files)) {
		fmt.Fprintf(&b, "%s = %s\n", tomlString(name), tomlString(e.Files[name]))
	}
	return b.String()
}

// AddToLock returns the lock of the data folder root with e added: the
// current file as it is, comments included, then e's block (a new lock
// starts with a header saying what it is). It refuses a lock with
// problems and a version that is locked already: a published version is
// never locked anew.
func AddToLock(root string, e LockEntry) ([]byte, error) {
	path := filepath.Join(root, LockFile)
	cur, err := readFile(path, maxLockFile, nil)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cur = []byte(lockHeader)
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", path, err)
	default:
		entries, _, ps := parseLock(path, cur)
		if err := ps.Err(); err != nil {
			return nil, err
		}
		for _, x := range entries {
			if x.Dataset == e.Dataset {
				return nil, fmt.Errorf("%s locks %s already: a published dataset version is never locked anew", path, e.Dataset)
			}
		}
	}
	out := append([]byte(nil), cur...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, '\n')
	out = append(out, e.TOML()...)
	if len(out) > maxLockFile {
		return nil, fmt.Errorf("%s: with %s it would be %d bytes; at most %d", path, e.Dataset, len(out), maxLockFile)
	}
	return out, nil
}

// CheckDatasetFiles checks a dataset version before anything of it is
// written: files, by name, are what root/datasets/<key>/ would hold
// (root is the data folder), and they are loaded as Load would load them
// from there, each problem naming the file as it would be named. What
// passes loads once written. It returns the version as loaded and the
// entry the lock would get for it.
func CheckDatasetFiles(root, key string, files map[string][]byte) (*Dataset, LockEntry, error) {
	if err := checkDatasetKey(key); err != nil {
		return nil, LockEntry{}, fmt.Errorf("dataset version %w", err)
	}
	rel := "datasets/" + key
	f := &folder{rel: rel, path: filepath.Join(root, filepath.FromSlash(rel)), files: map[string]*entry{}}
	e := LockEntry{Dataset: key, Files: map[string]string{}}
	var ps Problems
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(f.path, name)
		data := files[name]
		switch {
		case !datasetFile(name) || strings.ContainsAny(name, `/\`):
			ps.Add(p, 0, "", "unexpected file: %s", layoutHint(strings.Split(rel, "/")))
			continue
		case int64(len(data)) > datasetFileLimit(name):
			ps.Add(p, 0, "", "%s", (&tooLarge{int64(len(data)), datasetFileLimit(name)}).Error())
			continue
		}
		if data == nil {
			data = []byte{} // an empty file is still a file
		}
		f.files[name] = &entry{name: name, path: p, size: int64(len(data)), data: data}
		f.names = append(f.names, name)
		sum := sha256.Sum256(data)
		e.Files[name] = hex.EncodeToString(sum[:])
	}
	if err := ps.Err(); err != nil {
		return nil, LockEntry{}, err
	}
	ds, ps := loadDataset(f)
	if err := ps.Err(); err != nil {
		return nil, LockEntry{}, err
	}
	return ds, e, nil
}
