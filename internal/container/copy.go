package container

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// File is a file to copy into a container or an image's build context, or
// one copied out of a container.
type File struct {
	Path string      // slash-separated, relative to the destination folder
	Mode fs.FileMode // permission bits (others are ignored); 0644 when zero
	Data []byte
	// Link, when set, makes the entry a symbolic link to Link (Data and
	// Mode are then ignored). CopyOut never returns links.
	Link string
}

// DefaultMaxCopyOut is CopyOut's cap when maxBytes is not positive.
const DefaultMaxCopyOut = 64 << 20

// CopyIn writes files into the folder dest of the container (created if
// missing), owned by root. Parent folders are created as needed; existing
// files are replaced.
func (c *Container) CopyIn(ctx context.Context, dest string, files []File) error {
	err := c.copyIn(ctx, dest, files)
	if err != nil && c.lost != nil {
		err = c.lost(ctx, err, false)
	}
	return err
}

func (c *Container) copyIn(ctx context.Context, dest string, files []File) error {
	if !path.IsAbs(dest) {
		return fmt.Errorf("copy into %s: destination %q is not absolute", c.Name, dest)
	}
	archive, err := tarFiles(files)
	if err != nil {
		return fmt.Errorf("copy into %s:%s: %w", c.Name, dest, err)
	}
	put := func() error {
		_, err := c.eng.cli.CopyToContainer(ctx, c.ID, client.CopyToContainerOptions{
			DestinationPath: dest,
			Content:         bytes.NewReader(archive),
		})
		return err
	}
	err = put()
	if cerrdefs.IsNotFound(err) {
		// The engine extracts only into an existing folder.
		res, merr := c.Exec(ctx, []string{"mkdir", "-p", "--", dest}, ExecOptions{Timeout: time.Minute})
		if merr == nil && res.ExitCode != 0 {
			merr = fmt.Errorf("mkdir -p %s: exit status %d: %s", dest, res.ExitCode, bytes.TrimSpace(res.Stderr))
		}
		if merr != nil {
			return fmt.Errorf("copy into %s:%s: %w", c.Name, dest, merr)
		}
		err = put()
	}
	if err != nil {
		return fmt.Errorf("copy into %s:%s: %w", c.Name, dest, err)
	}
	return nil
}

// tarFiles makes an uncompressed tar archive of files, owned by root.
func tarFiles(files []File) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	for _, f := range files {
		name, err := cleanRel(f.Path)
		if err != nil {
			return nil, err
		}
		hdr := &tar.Header{Name: name, ModTime: now, Format: tar.FormatPAX}
		if f.Link != "" {
			hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, f.Link, 0o777
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.Data))
			hdr.Mode = int64(f.Mode.Perm())
			if hdr.Mode == 0 {
				hdr.Mode = 0o644
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("tar %s: %w", name, err)
		}
		if f.Link == "" {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, fmt.Errorf("tar %s: %w", name, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("tar: %w", err)
	}
	return buf.Bytes(), nil
}

// cleanRel checks that p is a relative path that stays inside its folder
// and returns it cleaned.
func cleanRel(p string) (string, error) {
	c := path.Clean(p)
	if p == "" || c == "." || path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") || strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q is not a relative path inside its folder", p)
	}
	return c, nil
}

// CopyOut reads the file or folder at src in the container. For a folder
// it returns the regular files under it, with paths relative to it; for a
// file, that file with its base name as path. Other entries (folders,
// links, devices) are skipped. It fails if the files hold more than
// maxBytes in all (DefaultMaxCopyOut when not positive) or if an entry's
// path would escape src. When src does not exist, the error wraps
// fs.ErrNotExist.
func (c *Container) CopyOut(ctx context.Context, src string, maxBytes int64) ([]File, error) {
	files, err := c.copyOut(ctx, src, maxBytes)
	if err != nil && c.lost != nil {
		err = c.lost(ctx, err, false)
	}
	return files, err
}

func (c *Container) copyOut(ctx context.Context, src string, maxBytes int64) ([]File, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxCopyOut
	}
	res, err := c.eng.cli.CopyFromContainer(ctx, c.ID, client.CopyFromContainerOptions{SourcePath: src})
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("copy from %s:%s: %w (%w)", c.Name, src, fs.ErrNotExist, err)
		}
		return nil, fmt.Errorf("copy from %s:%s: %w", c.Name, src, err)
	}
	defer res.Content.Close()
	files, err := untarFiles(res.Content, res.Stat.Name, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("copy from %s:%s: %w", c.Name, src, err)
	}
	return files, nil
}

// untarFiles reads the regular files of an archive whose entries are base
// or under base/, as the engine sends them.
func untarFiles(r io.Reader, base string, maxBytes int64) ([]File, error) {
	tr := tar.NewReader(r)
	var files []File
	var total int64
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading archive: %w", err)
		}
		name := path.Clean(hdr.Name)
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return nil, fmt.Errorf("archive entry %q escapes the folder", hdr.Name)
		}
		rel := name
		if name != base {
			var ok bool
			if rel, ok = strings.CutPrefix(name, base+"/"); !ok {
				return nil, fmt.Errorf("archive entry %q is outside %q", hdr.Name, base)
			}
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if hdr.Size > maxBytes-total {
			return nil, fmt.Errorf("more than %d bytes (at %s)", maxBytes, hdr.Name)
		}
		data, err := io.ReadAll(io.LimitReader(tr, hdr.Size))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", hdr.Name, err)
		}
		total += int64(len(data))
		files = append(files, File{Path: rel, Mode: fs.FileMode(hdr.Mode).Perm(), Data: data})
	}
}
