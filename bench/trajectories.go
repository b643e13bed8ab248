package bench

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// TrajectoryFile is the name of one attempt's trajectory in a submission's
// trajectories.tar.gz: <instance>/attempt-<k>/trajectory.jsonl, as `eval
// submit` packs it.
const TrajectoryFile = "trajectory.jsonl"

// Trajectory is one entry of a submission's trajectories.tar.gz, its
// name checked: the site makes pages and paths of InstanceID and Attempt.
type Trajectory struct {
	Name       string // the entry's name in the archive
	InstanceID string // a name CheckName accepts, of an instance of the split
	Attempt    int    // 1 to the submission's attempts
	Size       int64  // bytes, expanded
	SHA256     string // lowercase hex, of the expanded bytes
}

// URLPath is the trajectory's place below a submission's files:
// <instance>/attempt-<k>, both parts checked when the archive was read.
func (t *Trajectory) URLPath() string {
	return t.InstanceID + "/attempt-" + strconv.Itoa(t.Attempt)
}

// trajectoryEntry parses an entry name, <instance>/attempt-<k>/
// trajectory.jsonl, checking each part before it can become a path: the
// instance id a safe name (CheckName), k a number in its canonical form.
func trajectoryEntry(name string, attempts int) (id string, attempt int, err error) {
	parts := strings.Split(name, "/")
	if len(parts) != 3 || parts[2] != TrajectoryFile {
		return "", 0, fmt.Errorf("want <instance>/attempt-<k>/%s", TrajectoryFile)
	}
	if err := CheckName(parts[0]); err != nil {
		return "", 0, fmt.Errorf("instance id %w", err)
	}
	k, ok := strings.CutPrefix(parts[1], "attempt-")
	a, aerr := strconv.Atoi(k)
	if !ok || aerr != nil || strconv.Itoa(a) != k || a < 1 || a > max(attempts, 1) {
		return "", 0, fmt.Errorf("%q is not attempt-<k> with k from 1 to the submission's attempts (%d)", parts[1], max(attempts, 1))
	}
	return parts[0], a, nil
}

// archiveReader reads a trajectories.tar.gz as a stream within the
// limits: never more than maxArchiveFile compressed, maxArchiveExpanded
// expanded, maxArchiveEntries entries.
type archiveReader struct {
	path    string
	tr      *tar.Reader
	gz      *gzip.Reader
	closeFn func() error
	n       int
	total   int64
}

func openArchive(path string) (*archiveReader, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	gz, err := gzip.NewReader(io.LimitReader(f, maxArchiveFile+1))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("not a gzip file: %w", err)
	}
	return &archiveReader{path: path, tr: tar.NewReader(gz), gz: gz, closeFn: f.Close}, nil
}

func (a *archiveReader) Close() error {
	a.gz.Close()
	return a.closeFn()
}

// next returns the next regular file's header, skipping folders; io.EOF at
// the end. An entry of any other type, or past a limit, is an error.
func (a *archiveReader) next() (*tar.Header, error) {
	for {
		hdr, err := a.tr.Next()
		if err != nil {
			if err == io.EOF {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("reading the archive: %w", err)
		}
		a.n++
		switch {
		case a.n > maxArchiveEntries:
			return nil, fmt.Errorf("holds more than %d entries", maxArchiveEntries)
		case hdr.Typeflag == tar.TypeDir:
			continue
		case hdr.Typeflag != tar.TypeReg:
			return nil, fmt.Errorf("entry %q is not a regular file", hdr.Name)
		case hdr.Size > maxTrajectoryFile:
			return nil, fmt.Errorf("entry %q is %d bytes expanded; at most %d", hdr.Name, hdr.Size, maxTrajectoryFile)
		}
		a.total += hdr.Size
		if a.total > maxArchiveExpanded {
			return nil, fmt.Errorf("is more than %d bytes expanded", maxArchiveExpanded)
		}
		return hdr, nil
	}
}

// indexTrajectories lists a trajectories.tar.gz: each entry's name
// checked, its instance one of the split's, its size and SHA-256. An
// entry that fails a check is left out of the index, with a problem
// naming the file and the entry (so `build` and `build --check` refuse
// it); an archive that cannot be read to its end is one problem.
func indexTrajectories(path string, ds *Dataset, split string, attempts int, ps Problems) ([]Trajectory, Problems) {
	a, err := openArchive(path)
	if err != nil {
		return nil, append(ps, Problem{File: path, Msg: err.Error()})
	}
	defer a.Close()
	var out []Trajectory
	seen := map[string]bool{}
	for {
		hdr, err := a.next()
		if err == io.EOF {
			return out, ps
		}
		if err != nil {
			return nil, append(ps, Problem{File: path, Msg: err.Error()})
		}
		id, att, err := trajectoryEntry(hdr.Name, attempts)
		switch in := ds.Instance(id); {
		case err != nil:
			ps.Add(path, 0, "", "entry %q: %v", hdr.Name, err)
			continue
		case in == nil || !ds.InSplit(split, in):
			ps.Add(path, 0, "", "entry %q: instance %q is not in split %q of %s", hdr.Name, id, split, ds.DisplayName())
			continue
		case seen[hdr.Name]:
			ps.Add(path, 0, "", "entry %q appears twice", hdr.Name)
			continue
		}
		seen[hdr.Name] = true
		h := sha256.New()
		n, err := io.Copy(h, a.tr)
		if err != nil {
			return nil, append(ps, Problem{File: path, Msg: fmt.Sprintf("entry %q: %v", hdr.Name, err)})
		}
		out = append(out, Trajectory{Name: hdr.Name, InstanceID: id, Attempt: att, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
}

// ErrTrajectoryChanged is what ReadTrajectories returns when an entry is
// no longer what Load indexed: the archive changed since.
var ErrTrajectoryChanged = errors.New("changed since data/ was loaded")

// ReadTrajectories streams the submission's trajectories.tar.gz once and
// calls fn with each indexed trajectory that want accepts and its bytes,
// one at a time, so that at most one trajectory is in memory. Entries Load
// did not index (which failed a check) are skipped unread; one whose
// bytes are not those Load indexed, or that is no longer in the archive,
// fails with ErrTrajectoryChanged.
func (s *Submission) ReadTrajectories(want func(*Trajectory) bool, fn func(*Trajectory, []byte) error) error {
	f := s.File(TrajectoriesFile)
	if f == nil {
		return nil
	}
	byName := make(map[string]*Trajectory, len(s.Trajectories))
	for i := range s.Trajectories {
		byName[s.Trajectories[i].Name] = &s.Trajectories[i]
	}
	a, err := openArchive(f.Path)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	defer a.Close()
	for {
		hdr, err := a.next()
		if err == io.EOF {
			for i := range s.Trajectories {
				if t := &s.Trajectories[i]; byName[t.Name] != nil && want(t) {
					return fmt.Errorf("entry %q: missing from the archive: %w", t.Name, ErrTrajectoryChanged)
				}
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		t := byName[hdr.Name]
		if t == nil || !want(t) {
			continue
		}
		delete(byName, hdr.Name) // a second entry of the name was refused by Load
		// The header's size is checked against maxTrajectoryFile, and the
		// tar reader gives exactly that many bytes.
		data := make([]byte, hdr.Size)
		if _, err := io.ReadFull(a.tr, data); err != nil {
			return fmt.Errorf("%s: entry %q: %w", f.Path, hdr.Name, err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != t.SHA256 {
			return fmt.Errorf("%s: entry %q: %w", f.Path, hdr.Name, ErrTrajectoryChanged)
		}
		if err := fn(t, data); err != nil {
			return err
		}
	}
}
