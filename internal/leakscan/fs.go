package leakscan

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// ScanFS reads a file system as the engine exports a container's (the
// tar stream of `docker export`), a starting point the harness made, and
// reports where it holds the instances' solutions: every finding reaches
// the starting point. The starting point's own source files (under
// /testbed) and the standard library are the base: the lines they share
// with the solution prove nothing elsewhere.
func ScanFS(ctx context.Context, export io.Reader, needles []Needles) (*Report, error) {
	s, err := newScanner(needles)
	if err != nil {
		return nil, err
	}
	defer s.close()
	s.baseOf = fsBase
	tr := tar.NewReader(export)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the exported file system: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		p := "/" + strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		if strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/") || strings.HasPrefix(p, "/dev/") {
			continue
		}
		if err := s.file("", p, tr, hdr.Size); err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
	}
	gits, err := s.gitMatches(ctx)
	if err != nil {
		return nil, err
	}
	hits := append(s.hits, gits...)
	rep := &Report{Skipped: s.skipped, Files: s.files}
	rep.Findings = s.findings(hits, func(h hit, _ Needles) (bool, string) {
		if h.kind == InGit {
			return true, "a git repository of the starting point"
		}
		return true, "a file of the starting point"
	})
	return rep, nil
}
