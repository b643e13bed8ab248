package evaluate

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A submission's logs.tar.gz holds, per instance and attempt, what the run
// wrote: <instance>/attempt-<k>/report.json, container.log and the raw
// output of every test file (tests/<n>-<file>.stdout, .stderr, .xml,
// .jsonl). `eval validate` re-grades a submission from it. The archive is
// written deterministically (sorted names, fixed times and owners), so the
// same run gives the same bytes.

// AttemptLog is one instance attempt as the logs hold it.
type AttemptLog struct {
	Report *Report
	Files  map[string][]byte // the test outputs, by file name under tests/
}

// PackLogs archives the logs of the instances' attempts of a run folder.
func PackLogs(dir string, ids []string, attempts int) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	add := func(name string, data []byte) error {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0).UTC(), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, id := range ids {
		for a := 1; a <= attempts; a++ {
			adir := attemptDir(dir, id, a)
			if _, err := os.Stat(filepath.Join(adir, ReportFile)); err != nil {
				continue
			}
			prefix := id + "/attempt-" + strconv.Itoa(a) + "/"
			for _, name := range []string{ReportFile, LogFile} {
				data, err := os.ReadFile(filepath.Join(adir, name))
				if err != nil {
					return nil, fmt.Errorf("packing the logs of %s: %w", id, err)
				}
				if err := add(prefix+name, data); err != nil {
					return nil, err
				}
			}
			entries, err := os.ReadDir(filepath.Join(adir, TestsDir))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			names := make([]string, 0, len(entries))
			for _, e := range entries {
				if e.Type().IsRegular() {
					names = append(names, e.Name())
				}
			}
			sort.Strings(names)
			for _, n := range names {
				data, err := os.ReadFile(filepath.Join(adir, TestsDir, n))
				if err != nil {
					return nil, err
				}
				if err := add(prefix+TestsDir+"/"+n, data); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// UnpackLogs reads logs.tar.gz into attempt logs by instance and attempt.
// It reads regular files only, at most limit bytes in all, and refuses a
// name that is not <instance>/attempt-<k>/...: the archive is a stranger's.
func UnpackLogs(raw []byte, limit int64) (map[string]map[int]*AttemptLog, error) {
	gz, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("logs.tar.gz is not gzip: %w", err)
	}
	tr := tar.NewReader(gz)
	out := map[string]map[int]*AttemptLog{}
	var total int64
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("logs.tar.gz: %w", err)
		}
		if hdr.Typeflag == tar.TypeDir {
			continue
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("logs.tar.gz: %q is not a regular file", hdr.Name)
		}
		parts := strings.Split(path.Clean(hdr.Name), "/")
		if path.Clean(hdr.Name) != hdr.Name || len(parts) < 3 || !strings.HasPrefix(parts[1], "attempt-") {
			return nil, fmt.Errorf("logs.tar.gz: unexpected entry %q (want <instance>/attempt-<k>/...)", hdr.Name)
		}
		a, err := strconv.Atoi(strings.TrimPrefix(parts[1], "attempt-"))
		if err != nil || a < 1 || a > 100 {
			return nil, fmt.Errorf("logs.tar.gz: unexpected entry %q", hdr.Name)
		}
		total += hdr.Size
		if hdr.Size < 0 || total > limit {
			return nil, fmt.Errorf("logs.tar.gz holds more than %d bytes unpacked", limit)
		}
		data, err := io.ReadAll(io.LimitReader(tr, hdr.Size))
		if err != nil {
			return nil, fmt.Errorf("logs.tar.gz: %s: %w", hdr.Name, err)
		}
		if out[parts[0]] == nil {
			out[parts[0]] = map[int]*AttemptLog{}
		}
		al := out[parts[0]][a]
		if al == nil {
			al = &AttemptLog{Files: map[string][]byte{}}
			out[parts[0]][a] = al
		}
		rest := strings.Join(parts[2:], "/")
		switch {
		case rest == ReportFile:
			var rep Report
			if err := json.Unmarshal(data, &rep); err != nil {
				return nil, fmt.Errorf("logs.tar.gz: %s: %w", hdr.Name, err)
			}
			al.Report = &rep
		case strings.HasPrefix(rest, TestsDir+"/") && len(parts) == 4:
			al.Files[parts[3]] = data
		}
	}
	return out, nil
}
