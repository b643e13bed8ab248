package evaluate

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/featbench/featbench/bench"
)

// A submission's logs.tar.gz holds the run's manifest.json and, per
// instance and attempt, what the run wrote: <instance>/attempt-<k>/
// report.json, prediction.diff, container.log and the raw output of every
// test file (tests/<n>-<file>.stdout, .stderr, .xml, .jsonl). `eval
// validate` re-grades a submission from it. The archive is written
// deterministically (sorted names, fixed times and owners), so the same
// run gives the same bytes.

// AttemptLog is one instance attempt as the logs hold it.
type AttemptLog struct {
	Report     *Report
	Prediction []byte            // prediction.diff, the patch as applied; nil when the logs hold none
	Files      map[string][]byte // the test outputs, by file name under tests/
}

// Logs is a submission's logs.tar.gz, read.
type Logs struct {
	Attempts map[string]map[int]*AttemptLog // by instance and attempt
	Manifest *Manifest                      // manifest.json; nil when the archive has none
	// Sums are the SHA-256 of every file but manifest.json, by its path in
	// the archive, to check against the manifest.
	Sums map[string]string
}

// LogLimits bound what reading a logs.tar.gz may cost: the archive is a
// stranger's, and a few megabytes of gzip can expand to gigabytes.
type LogLimits struct {
	Compressed int64 // bytes of the archive itself
	Total      int64 // bytes of all its files, expanded
	File       int64 // bytes of one file, expanded
	Entries    int   // entries (files and folders)
}

// DefaultLogLimits are generous for real logs (the example dataset's are
// 2 MB expanded for 28 instances), and refuse a 1 GiB bomb after reading
// at most Total.
func DefaultLogLimits() LogLimits {
	return LogLimits{Compressed: 100 << 20, Total: 512 << 20, File: 64 << 20, Entries: 100_000}
}

// PackLogs archives the logs of the instances' attempts of a run folder,
// with man, when given, as manifest.json: every file packed must have the
// SHA-256 the manifest records, so a run folder edited after the run is
// not packed.
func PackLogs(dir string, ids []string, attempts int, man *Manifest) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	add := func(name string, data []byte) error {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0).UTC(), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("packing %s: %w", name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return fmt.Errorf("packing %s: %w", name, err)
		}
		return nil
	}
	if man != nil {
		raw, err := json.MarshalIndent(man, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encoding the manifest: %w", err)
		}
		if err := add(ManifestFile, append(raw, '\n')); err != nil {
			return nil, err
		}
	}
	packed := map[string]bool{}
	for _, id := range ids {
		for a := 1; a <= attempts; a++ {
			adir := attemptDir(dir, id, a)
			if _, err := os.Stat(filepath.Join(adir, ReportFile)); err != nil {
				continue
			}
			names, err := attemptFiles(adir)
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				data, err := os.ReadFile(filepath.Join(adir, filepath.FromSlash(n)))
				if err != nil {
					return nil, fmt.Errorf("packing the logs of %s: %w", id, err)
				}
				name := attemptPrefix(id, a) + n
				if man != nil {
					switch want, ok := man.Files[name]; {
					case !ok:
						return nil, fmt.Errorf("%s is not in the run's %s: it was added after the run finished", filepath.Join(adir, filepath.FromSlash(n)), ManifestFile)
					case want != Sum(data):
						return nil, fmt.Errorf("%s changed after the run finished (its SHA-256 is not the one in the run's %s)", filepath.Join(adir, filepath.FromSlash(n)), ManifestFile)
					}
				}
				packed[name] = true
				if err := add(name, data); err != nil {
					return nil, err
				}
			}
		}
	}
	if man != nil {
		for name := range man.Files {
			if !packed[name] {
				return nil, fmt.Errorf("%s lists %s, which the run folder %s no longer has", ManifestFile, name, dir)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("packing the logs: %w", err)
	}
	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("packing the logs: %w", err)
	}
	return buf.Bytes(), nil
}

// UnpackLogs reads the logs.tar.gz at path as a stream, within the limits:
// the archive is never held whole, a file larger than lim.File is refused
// by its header before any of it is expanded, and reading stops as soon as
// the files reach lim.Total. Only regular files (and folders) under
// <instance>/attempt-<k>/, and manifest.json, are accepted. The test
// outputs, reports and predictions are kept; container.log is only hashed.
func UnpackLogs(ctx context.Context, path string, lim LogLimits) (*Logs, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	logs, err := unpackLogs(ctx, f, lim)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return logs, nil
}

// openRegular opens a regular file, never through a symbolic link: data/
// is a stranger's, and the link could point anywhere.
func openRegular(path string) (*os.File, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// The file opened must be the one checked, not a link put in its place.
	after, err := f.Stat()
	if err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was opened", path)
	}
	return f, nil
}

// capped reads at most n bytes of r and fails beyond them.
type capped struct {
	r io.Reader
	n int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.n < 0 {
		return 0, errors.New("over the size limit")
	}
	if int64(len(p)) > c.n+1 {
		p = p[:c.n+1]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	if c.n < 0 {
		return n, errors.New("over the size limit")
	}
	return n, err
}

// or is err, unless the archive went over its compressed size: then that
// is the error, whatever the decompressor made of the cut.
func (c *capped) or(err error, lim LogLimits) error {
	if c.n < 0 {
		return fmt.Errorf("larger than %d bytes compressed", lim.Compressed)
	}
	return err
}

func unpackLogs(ctx context.Context, r io.Reader, lim LogLimits) (*Logs, error) {
	comp := &capped{r: r, n: lim.Compressed}
	gz, err := gzip.NewReader(comp)
	if err != nil {
		return nil, comp.or(fmt.Errorf("not a gzip file: %w", err), lim)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	logs := &Logs{Attempts: map[string]map[int]*AttemptLog{}, Sums: map[string]string{}}
	seen := map[string]bool{}
	var total int64
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, comp.or(fmt.Errorf("not a readable tar archive: %w", err), lim)
		}
		if n >= lim.Entries {
			return nil, fmt.Errorf("holds more than %d entries", lim.Entries)
		}
		// Refused by the header, before a byte of it is expanded.
		if hdr.Size < 0 || hdr.Size > lim.File {
			return nil, fmt.Errorf("%s is %d bytes unpacked, over the limit of %d for one file", hdr.Name, hdr.Size, lim.File)
		}
		if total += hdr.Size; total > lim.Total {
			return nil, fmt.Errorf("holds more than %d bytes unpacked", lim.Total)
		}
		if hdr.Typeflag == tar.TypeDir {
			continue
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("%q is not a regular file", hdr.Name)
		}
		if seen[hdr.Name] {
			return nil, fmt.Errorf("%s is in the archive twice", hdr.Name)
		}
		seen[hdr.Name] = true
		if hdr.Name == ManifestFile {
			data, err := readEntry(tr, hdr)
			if err != nil {
				return nil, comp.or(err, lim)
			}
			if logs.Manifest, err = ParseManifest(data); err != nil {
				return nil, fmt.Errorf("%s: %w", hdr.Name, err)
			}
			continue
		}
		id, a, rest, err := entryName(hdr.Name)
		if err != nil {
			return nil, err
		}
		if logs.Attempts[id] == nil {
			logs.Attempts[id] = map[int]*AttemptLog{}
		}
		al := logs.Attempts[id][a]
		if al == nil {
			al = &AttemptLog{Files: map[string][]byte{}}
			logs.Attempts[id][a] = al
		}
		if rest == LogFile {
			// Only hashed: regrading does not read it, and it is the
			// largest file, so it is not kept in memory.
			h := sha256.New()
			if _, err := io.Copy(h, io.LimitReader(tr, hdr.Size)); err != nil {
				return nil, comp.or(fmt.Errorf("%s: %w", hdr.Name, err), lim)
			}
			logs.Sums[hdr.Name] = hex.EncodeToString(h.Sum(nil))
			continue
		}
		data, err := readEntry(tr, hdr)
		if err != nil {
			return nil, comp.or(err, lim)
		}
		logs.Sums[hdr.Name] = Sum(data)
		switch {
		case rest == ReportFile:
			var rep Report
			if err := json.Unmarshal(data, &rep); err != nil {
				return nil, fmt.Errorf("%s: %w", hdr.Name, err)
			}
			al.Report = &rep
		case rest == PredFile:
			al.Prediction = data
		default:
			al.Files[strings.TrimPrefix(rest, TestsDir+"/")] = data
		}
	}
	return logs, nil
}

// readEntry reads the current file of the archive whole; its size was
// checked against the limits.
func readEntry(tr *tar.Reader, hdr *tar.Header) ([]byte, error) {
	data := make([]byte, hdr.Size)
	if _, err := io.ReadFull(tr, data); err != nil {
		return nil, fmt.Errorf("%s: %w", hdr.Name, err)
	}
	return data, nil
}

// entryName splits an archive path <instance>/attempt-<k>/<file>, where the
// file is report.json, prediction.diff, container.log or tests/<name>.
func entryName(name string) (id string, attempt int, rest string, err error) {
	bad := func() (string, int, string, error) {
		return "", 0, "", fmt.Errorf("unexpected entry %q (want %s, or <instance>/attempt-<k>/ and %s, %s, %s or %s/<name>)",
			name, ManifestFile, ReportFile, PredFile, LogFile, TestsDir)
	}
	parts := strings.Split(name, "/")
	if path.Clean(name) != name || len(parts) < 3 || len(parts) > 4 || bench.CheckName(parts[0]) != nil {
		return bad()
	}
	k, ok := strings.CutPrefix(parts[1], "attempt-")
	a, err := strconv.Atoi(k)
	if !ok || err != nil || a < 1 || a > 100 || strconv.Itoa(a) != k {
		return bad()
	}
	rest = strings.Join(parts[2:], "/")
	switch {
	case len(parts) == 3 && (rest == ReportFile || rest == PredFile || rest == LogFile):
	case len(parts) == 4 && parts[2] == TestsDir && parts[3] != "" && parts[3] != "." && parts[3] != "..":
	default:
		return bad()
	}
	return parts[0], a, rest, nil
}
