package leakscan

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
)

// member is one file of an archive.
type member struct {
	name string
	data []byte
}

// Bounds of what is read of one archive: its members and their sizes
// (a zip bomb is read to the bound and no further).
const (
	maxMembers    = 20000
	maxUnpacked   = 256 << 20
	maxMemberSize = maxFile
)

// unpack reads data as an archive: a zip (a wheel; found even after a
// prefix, as pip's HTTP cache stores a response), a gzip stream (of a tar,
// an sdist, or of one file) or a tar. False when it is none of them.
func unpack(data []byte) ([]member, bool) {
	switch {
	case bytes.HasPrefix(data, []byte("\x1f\x8b")):
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, false
		}
		inner, err := io.ReadAll(io.LimitReader(zr, maxUnpacked))
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, false
		}
		if ms, ok := untar(inner); ok {
			return ms, true
		}
		return []member{{name: "-", data: inner}}, true
	case bytes.Contains(data, []byte("PK\x05\x06")):
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return nil, false
		}
		var out []member
		total := 0
		for i, f := range zr.File {
			if i >= maxMembers || total >= maxUnpacked {
				break
			}
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(io.LimitReader(rc, maxMemberSize))
			rc.Close()
			total += len(b)
			out = append(out, member{name: f.Name, data: b})
		}
		return out, true
	}
	return untar(data)
}

// untar reads data as a tar archive, when it is one (ustar's magic).
func untar(data []byte) ([]member, bool) {
	if len(data) < 265 || !bytes.Equal(data[257:262], []byte("ustar")) {
		return nil, false
	}
	tr := tar.NewReader(bytes.NewReader(data))
	var out []member
	total := 0
	for len(out) < maxMembers && total < maxUnpacked {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(tr, maxMemberSize))
		total += len(b)
		out = append(out, member{name: hdr.Name, data: b})
	}
	return out, true
}
