package evaluate

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/meter"
)

// PackTrajectories archives the trajectories of the instances' measured
// attempts (those whose report names one) as trajectories.tar.gz:
// <instance>/attempt-<k>/trajectory.jsonl, each with the SHA-256 its
// report (hashed in the manifest) records, so a trajectory edited after
// the run is not packed. It returns nil when no attempt has one.
func PackTrajectories(dir string, ids []string, attempts int) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	n := 0
	for _, id := range ids {
		for a := 1; a <= attempts; a++ {
			adir := attemptDir(dir, id, a)
			rep, err := ReadReport(adir)
			if err != nil || rep.Trajectory == "" {
				continue
			}
			path := filepath.Join(adir, TrajectoryFile)
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("the trajectory of %s: %w", id, err)
			}
			if Sum(data) != rep.Trajectory {
				return nil, fmt.Errorf("%s changed after the run (its SHA-256 is not the one its report records)", path)
			}
			hdr := &tar.Header{Name: attemptPrefix(id, a) + TrajectoryFile, Mode: 0o644, Size: int64(len(data)),
				ModTime: time.Unix(0, 0).UTC(), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
			if err := tw.WriteHeader(hdr); err != nil {
				return nil, err
			}
			if _, err := tw.Write(data); err != nil {
				return nil, err
			}
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// TrajectoryCheck is what reading one trajectory of an archive gave.
type TrajectoryCheck struct {
	Sum    string       // its SHA-256
	Totals meter.Totals // what it replays to (costs as recorded)
	Err    error        // it does not replay
}

// CheckTrajectories reads a trajectories.tar.gz as a stream within the
// limits, and replays each <instance>/attempt-<k>/trajectory.jsonl, by its
// path in the archive.
func CheckTrajectories(ctx context.Context, path string, lim LogLimits) (map[string]TrajectoryCheck, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	comp := &capped{r: f, n: lim.Compressed}
	gz, err := gzip.NewReader(comp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, comp.or(fmt.Errorf("not a gzip file: %w", err), lim))
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	out := map[string]TrajectoryCheck{}
	var total int64
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, comp.or(err, lim))
		}
		switch {
		case n >= lim.Entries:
			return nil, fmt.Errorf("%s: more than %d entries", path, lim.Entries)
		case hdr.Typeflag == tar.TypeDir:
			continue
		case hdr.Typeflag != tar.TypeReg:
			return nil, fmt.Errorf("%s: %s is not a regular file", path, hdr.Name)
		case hdr.Size > lim.File:
			return nil, fmt.Errorf("%s: %s is larger than %d bytes", path, hdr.Name, lim.File)
		}
		total += hdr.Size
		if total > lim.Total {
			return nil, fmt.Errorf("%s: larger than %d bytes expanded", path, lim.Total)
		}
		parts := strings.Split(hdr.Name, "/")
		k, isAttempt := "", false
		if len(parts) == 3 {
			k, isAttempt = strings.CutPrefix(parts[1], "attempt-")
		}
		if a, err := strconv.Atoi(k); !isAttempt || err != nil || a < 1 || a > 100 || strconv.Itoa(a) != k ||
			bench.CheckName(parts[0]) != nil || parts[2] != TrajectoryFile {
			return nil, fmt.Errorf("%s: unexpected entry %q (want <instance>/attempt-<k>/%s)", path, hdr.Name, TrajectoryFile)
		}
		h := sha256.New()
		tot, rerr := meter.Replay(io.TeeReader(io.LimitReader(tr, hdr.Size), h), nil)
		if _, err := io.Copy(h, tr); err != nil { // what Replay left unread
			return nil, fmt.Errorf("%s: %s: %w", path, hdr.Name, comp.or(err, lim))
		}
		out[hdr.Name] = TrajectoryCheck{Sum: hex.EncodeToString(h.Sum(nil)), Totals: tot, Err: rerr}
	}
}
