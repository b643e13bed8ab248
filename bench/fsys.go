package bench

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Names of the files a folder under data/ may hold besides the manifest,
// instances, metadata and results.
const (
	// CheckedFile is data/checked.toml, the maintainers' attestations.
	CheckedFile = "checked.toml"
	// PredictionsFile, LogsFile and TrajectoriesFile are the optional
	// files of a submission folder, published beside its results.
	PredictionsFile  = "predictions.jsonl"
	LogsFile         = "logs.tar.gz"
	TrajectoriesFile = "trajectories.tar.gz"
	// ReadmeFile may stand in any folder of data/; the site ignores it.
	ReadmeFile = "README.md"
	// LogosDir is data/logos/, organisation logos.
	LogosDir = "logos"
)

// notRegular is the message for anything under data/ that is neither a
// regular file nor a folder. Such an entry is never opened: a symbolic
// link could point at a secret or a device anywhere on the machine.
const notRegular = "data/ may hold only regular files and folders"

// entry is one regular file found under data/.
type entry struct {
	name string
	path string // to open: the data root joined with the path below it
	size int64  // as the walk saw it; reading checks again
	// data, when not nil, is the file's content, not yet written to path
	// (CheckDatasetFiles): reading takes it instead of opening path.
	data []byte
}

// read reads the folder's file name, known to be there, within limit.
func (f *folder) read(name string, limit int64) ([]byte, error) {
	e := f.files[name]
	if e.data != nil {
		if int64(len(e.data)) > limit {
			return nil, &tooLarge{int64(len(e.data)), limit}
		}
		return e.data, nil
	}
	return readFile(e.path, limit, nil)
}

// folder is a dataset version or submission folder and its files.
type folder struct {
	rel   string            // below the data root, with forward slashes
	path  string            // to open
	files map[string]*entry // regular files by name
	names []string          // their names, sorted
	// bad is set when the folder holds something that is not a regular
	// file or folder (already a problem): it is then not loaded at all.
	bad bool
}

func (f *folder) file(name string) *entry { return f.files[name] }

// tree is data/ as one walk found it, without following symbolic links.
type tree struct {
	datasets    []*folder // data/datasets/<name>/<version>/
	submissions []*folder // data/submissions/<name>/<version>/<split>/<folder>/
	logos       []*entry  // data/logos/*
	checked     *entry    // data/checked.toml
	lock        *entry    // data/datasets.lock.toml
}

// Where each kind of folder sits, in path segments below the data root.
const (
	datasetDepth    = 3 // datasets/<name>/<version>
	submissionDepth = 5 // submissions/<name>/<version>/<split>/<folder>
)

// datasetFile and submissionFile report the files a dataset version or
// submission folder may hold.
func datasetFile(name string) bool {
	switch name {
	case ManifestFile, InstancesFile, CollectionFile, ReadmeFile:
		return true
	}
	return false
}

func submissionFile(name string) bool {
	switch name {
	case MetadataFile, ResultsFile, PredictionsFile, LogsFile, TrajectoriesFile, ReadmeFile:
		return true
	}
	return false
}

// scan walks the data root once with Lstat semantics. Every entry that is
// not a regular file or folder, and every file or folder where none
// belongs, is a problem; nothing is opened. A missing or unreadable root
// is an error, not a problem.
func scan(root string) (*tree, Problems, error) {
	fi, err := os.Lstat(root)
	if err != nil {
		return nil, nil, fmt.Errorf("data folder: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, Problems{{File: root, Msg: "is a symbolic link: " + notRegular}}, nil
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("data folder: %s is not a folder", root)
	}
	t := &tree{}
	var ps Problems
	folders := map[string]*folder{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			ps = append(ps, readProblem(path, err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if path == root {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		parts := strings.Split(rel, "/")
		parent := folders[strings.Join(parts[:len(parts)-1], "/")]
		mode := d.Type()
		switch {
		case mode.IsDir():
			if !dirAllowed(parts) {
				ps.Add(path, 0, "", "unexpected folder: %s", layoutHint(parts[:len(parts)-1]))
				return fs.SkipDir
			}
			if len(parts) == datasetDepth && parts[0] == "datasets" || len(parts) == submissionDepth && parts[0] == "submissions" {
				f := &folder{rel: rel, path: path, files: map[string]*entry{}}
				folders[rel] = f
				if parts[0] == "datasets" {
					t.datasets = append(t.datasets, f)
				} else {
					t.submissions = append(t.submissions, f)
				}
			}
			return nil
		case !mode.IsRegular():
			ps.Add(path, 0, "", "is %s: %s", modeName(mode), notRegular)
			if parent != nil {
				parent.bad = true
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			ps = append(ps, readProblem(path, err))
			return nil
		}
		e := &entry{name: d.Name(), path: path, size: info.Size()}
		if e.name == ReadmeFile && e.size > maxReadmeFile {
			// Allowed in every folder, published by nobody, but bounded.
			ps.Add(path, 0, "", "%s", checkBytes(int(e.size), maxReadmeFile))
		}
		switch {
		case parent != nil && (parts[0] == "datasets" && datasetFile(e.name) || parts[0] == "submissions" && submissionFile(e.name)):
			parent.files[e.name] = e
			parent.names = append(parent.names, e.name)
		case e.name == ReadmeFile:
			// Allowed in every folder.
		case rel == CheckedFile:
			t.checked = e
		case rel == LockFile:
			t.lock = e
		case len(parts) == 2 && parts[0] == LogosDir:
			t.logos = append(t.logos, e)
		case misplacedName(e.name) != "":
			ps.Add(path, 0, "", "misplaced: %s belongs in %s", e.name, misplacedName(e.name))
		default:
			ps.Add(path, 0, "", "unexpected file: %s", layoutHint(parts[:len(parts)-1]))
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("walking %s: %w", root, err)
	}
	for _, f := range folders {
		sort.Strings(f.names)
	}
	return t, ps, nil
}

// dirAllowed reports whether a folder may stand at parts below the root.
func dirAllowed(parts []string) bool {
	switch parts[0] {
	case "datasets":
		return len(parts) <= datasetDepth
	case "submissions":
		return len(parts) <= submissionDepth
	case LogosDir:
		return len(parts) == 1
	}
	return false
}

// layoutHint says what a folder, given by its path segments below the
// root, may hold.
func layoutHint(dir []string) string {
	top := ""
	if len(dir) > 0 {
		top = dir[0]
	}
	switch {
	case len(dir) == 0:
		return "data/ holds only datasets/, submissions/, logos/, " + CheckedFile + ", " + LockFile + " and " + ReadmeFile
	case top == "datasets" && len(dir) == datasetDepth:
		return "a dataset folder holds only " + ManifestFile + ", " + InstancesFile + ", " + CollectionFile + " and " + ReadmeFile
	case top == "datasets":
		return "data/datasets/ holds <name>/<version>/ folders (and " + ReadmeFile + ")"
	case top == "submissions" && len(dir) == submissionDepth:
		return "a submission folder holds only " + MetadataFile + ", " + ResultsFile + ", " + PredictionsFile + ", " +
			LogsFile + ", " + TrajectoriesFile + " and " + ReadmeFile
	case top == "submissions":
		return "data/submissions/ holds <name>/<version>/<split>/<YYYYMMDD>_<slug>/ folders (and " + ReadmeFile + ")"
	case top == LogosDir:
		return "data/logos/ holds only <key>.png and <key>.jpg files"
	}
	return "nothing belongs here"
}

// misplacedName says where a data file of a known name belongs, or "".
func misplacedName(name string) string {
	switch {
	case datasetFile(name) && name != ReadmeFile:
		return "data/datasets/<name>/<version>/"
	case submissionFile(name) && name != ReadmeFile:
		return "data/submissions/<name>/<version>/<split>/<YYYYMMDD>_<slug>/"
	case name == CheckedFile, name == LockFile:
		return "data/" + name
	}
	return ""
}

func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// tooLarge is the error for a file over its limit.
type tooLarge struct{ size, limit int64 }

func (e *tooLarge) Error() string {
	if e.size < 0 {
		return fmt.Sprintf("is more than %d bytes; at most %d", e.limit, e.limit)
	}
	return fmt.Sprintf("is %d bytes; at most %d", e.size, e.limit)
}

// errNotRegular is returned when what a path opens is not a regular file
// (it changed since the walk).
var errNotRegular = errors.New("is not a regular file: " + notRegular)

// openRegular opens a file for reading without following a symbolic link
// (O_NOFOLLOW), without blocking on a named pipe, and checks on the open
// file that it is regular: no window between a check and the open.
func openRegular(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		if isLoop(err) {
			return nil, 0, errNotRegular
		}
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, errNotRegular
	}
	return f, fi.Size(), nil
}

// readFile reads a regular file of at most limit bytes. It never reads
// more than limit+1 bytes, so an oversized file costs nothing. buf, when
// not nil, is reused and grown.
func readFile(path string, limit int64, buf *[]byte) ([]byte, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, &tooLarge{size, limit}
	}
	var b []byte
	if buf != nil {
		b = (*buf)[:0]
	}
	// One byte more than the size, so that reaching the end needs no
	// further read; a file that grows meanwhile is still read, to the cap.
	if n := int(size) + 1; cap(b) < n {
		b = make([]byte, 0, n)
	}
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return nil, &tooLarge{-1, limit}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			nb := make([]byte, len(b), min(2*cap(b)+512, int(limit)+1))
			copy(nb, b)
			b = nb
		}
	}
	if buf != nil {
		*buf = b
	}
	return b, nil
}

// readProblem turns a reading error into a problem naming the file.
func readProblem(path string, err error) Problem {
	var tl *tooLarge
	var pe *fs.PathError
	switch {
	case errors.As(err, &tl), errors.Is(err, errNotRegular):
		return Problem{File: path, Msg: err.Error()}
	case errors.As(err, &pe):
		// The path is already the problem's file.
		return Problem{File: path, Msg: "cannot read: " + pe.Err.Error()}
	}
	return Problem{File: path, Msg: "cannot read: " + err.Error()}
}

// OpenFile opens a regular file of data/ for reading as ReadFile reads
// one (no symbolic link followed, no named pipe waited on, checked on
// the open file) and returns it with its size, which must be at most
// limit.
func OpenFile(path string, limit int64) (*os.File, int64, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", path, err)
	}
	if size > limit {
		f.Close()
		return nil, 0, fmt.Errorf("reading %s: %w", path, &tooLarge{size, limit})
	}
	return f, size, nil
}

// ReadFile reads a file that Load validated (a logo, a submission's logs)
// the way Load does: never through a symbolic link, only a regular file,
// at most limit bytes. Later steps read data/ through it, so a file
// swapped for a link after validation is still refused.
func ReadFile(path string, limit int64) ([]byte, error) {
	b, err := readFile(path, limit, nil)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, nil
}
