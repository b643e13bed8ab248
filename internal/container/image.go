package container

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/client"
)

// Image is an image as listed by Images.
type Image struct {
	Ref     string // the first tag, "" when untagged
	ID      string
	Labels  map[string]string
	Created time.Time
	Size    int64 // bytes, shared layers included
}

// ImageExists says whether the engine has the image ref (a tag or an ID).
func (e *Engine) ImageExists(ctx context.Context, ref string) (bool, error) {
	_, err := e.cli.ImageInspect(ctx, ref)
	switch {
	case err == nil:
		return true, nil
	case cerrdefs.IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("inspect image %s: %w", ref, err)
}

// ImportRootfs makes the image ref from the folder dir, a root file
// system: its files, folders and symbolic links go in with their modes and
// numeric owners; device nodes, sockets and pipes are left out (the engine
// provides /dev). labels become LABEL instructions, and changes are further
// Dockerfile instructions for the image's configuration (ENV, WORKDIR, CMD,
// ...).
func (e *Engine) ImportRootfs(ctx context.Context, dir, ref string, labels map[string]string, changes []string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("import %s: %w", ref, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("import %s: %s is not a folder", ref, dir)
	}
	changes = append(slices.Clone(changes), labelChanges(labels)...)

	pr, pw := io.Pipe()
	tarred := make(chan error, 1)
	go func() {
		err := tarRootfs(dir, pw)
		pw.CloseWithError(err)
		tarred <- err
	}()
	body, err := e.cli.ImageImport(ctx, client.ImageImportSource{Source: pr, SourceName: "-"}, ref,
		client.ImageImportOptions{Changes: changes, Message: "featbench: imported from a root file system"})
	if err != nil {
		pr.CloseWithError(err)
		<-tarred
		return fmt.Errorf("import %s: %w", ref, err)
	}
	_, streamErr := readStream(body, nil)
	body.Close()
	pr.CloseWithError(errors.New("import ended"))
	tarErr := <-tarred
	if streamErr != nil {
		return fmt.Errorf("import %s: %w", ref, streamErr)
	}
	if tarErr != nil {
		// The engine may have made an image of part of the folder.
		_ = e.RemoveImage(context.WithoutCancel(ctx), ref)
		return fmt.Errorf("import %s: archiving %s: %w", ref, dir, tarErr)
	}
	return e.mustExist(ctx, "import", ref)
}

// labelChanges turns labels into LABEL instructions, quoted as Dockerfiles
// quote, in a stable order.
func labelChanges(labels map[string]string) []string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, fmt.Sprintf(`LABEL "%s"="%s"`, quote(k), quote(labels[k])))
	}
	return out
}

// tarRootfs writes an uncompressed tar archive of dir to w.
func tarRootfs(dir string, w io.Writer) error {
	tw := tar.NewWriter(w)
	if err := tarDir(tw, dir, ""); err != nil {
		return err
	}
	return tw.Close()
}

// tarDir writes the folders, regular files and symbolic links under dir
// to tw, under prefix ("" or a slash-terminated path).
func tarDir(tw *tar.Writer, dir, prefix string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		switch mode := fi.Mode(); {
		case mode.IsDir(), mode.IsRegular():
		case mode&fs.ModeSymlink != 0:
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		default:
			return nil // devices, sockets, pipes
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		hdr.Name = prefix + filepath.ToSlash(rel)
		if fi.IsDir() {
			hdr.Name += "/"
		}
		// Numeric owners only: names would be looked up on this host.
		hdr.Uname, hdr.Gname = "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		n, err := io.Copy(tw, f)
		if err == nil && n != hdr.Size {
			err = fmt.Errorf("%s changed size while archived", p)
		}
		return err
	})
}

// Dir is a folder of this machine put into a build context at Path.
type Dir struct {
	Path string // slash-separated, relative to the context
	Host string
}

// BuildDirs is Build with folders of this machine in the build context
// besides files, streamed rather than held in memory (an agent's
// packages are hundreds of megabytes).
func (e *Engine) BuildDirs(ctx context.Context, ref, dockerfile string, files []File, dirs []Dir, labels map[string]string, log io.Writer) error {
	archive, err := tarFiles(append([]File{{Path: "Dockerfile", Data: []byte(dockerfile)}}, files...))
	if err != nil {
		return fmt.Errorf("build %s: build context: %w", ref, err)
	}
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := func() error {
			// The files' archive without its end marker, then the folders.
			tr := tar.NewReader(bytes.NewReader(archive))
			for {
				hdr, err := tr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
				if err := tw.WriteHeader(hdr); err != nil {
					return err
				}
				if _, err := io.Copy(tw, tr); err != nil {
					return err
				}
			}
			for _, d := range dirs {
				p, err := cleanRel(d.Path)
				if err != nil {
					return err
				}
				if err := tarDir(tw, d.Host, p+"/"); err != nil {
					return fmt.Errorf("%s: %w", d.Host, err)
				}
			}
			return tw.Close()
		}()
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	return e.build(ctx, ref, pr, labels, BuildNetwork{}, log)
}

// Build builds the image ref from dockerfile and a build context of files
// with the classic builder, without network. labels are set on the image.
// The build's output goes to log (which may be nil); when the build fails,
// the error holds the engine's message (for a failed RUN, the command and
// its exit status) and the end of the output.
func (e *Engine) Build(ctx context.Context, ref, dockerfile string, files []File, labels map[string]string, log io.Writer) error {
	for _, f := range files {
		if p, _ := cleanRel(f.Path); p == "Dockerfile" {
			return fmt.Errorf("build %s: the build context has its own Dockerfile", ref)
		}
	}
	archive, err := tarFiles(append([]File{{Path: "Dockerfile", Data: []byte(dockerfile)}}, files...))
	if err != nil {
		return fmt.Errorf("build %s: build context: %w", ref, err)
	}
	return e.build(ctx, ref, bytes.NewReader(archive), labels, BuildNetwork{}, log)
}

// BuildNetwork gives a build's RUN steps a network: Mode is the engine's
// network mode for their containers (for a build gate, "container:ID",
// which shares that container's network namespace), Args are build
// arguments they see (HTTP_PROXY and its kin among Docker's predefined
// ones stay out of the image's history; others need an ARG line). A zero
// BuildNetwork is none.
type BuildNetwork struct {
	Mode string
	Args map[string]string
}

// BuildNetworked is Build with the RUN steps on net, and without the
// engine's build cache: a step that reaches a network must run again to
// be checked again.
func (e *Engine) BuildNetworked(ctx context.Context, ref, dockerfile string, files []File, labels map[string]string, net BuildNetwork, log io.Writer) error {
	for _, f := range files {
		if p, _ := cleanRel(f.Path); p == "Dockerfile" {
			return fmt.Errorf("build %s: the build context has its own Dockerfile", ref)
		}
	}
	if net.Mode == "" {
		return fmt.Errorf("build %s: a networked build needs a network mode", ref)
	}
	archive, err := tarFiles(append([]File{{Path: "Dockerfile", Data: []byte(dockerfile)}}, files...))
	if err != nil {
		return fmt.Errorf("build %s: build context: %w", ref, err)
	}
	return e.build(ctx, ref, bytes.NewReader(archive), labels, net, log)
}

func (e *Engine) build(ctx context.Context, ref string, archive io.Reader, labels map[string]string, net BuildNetwork, log io.Writer) error {
	opts := client.ImageBuildOptions{
		Tags:        []string{ref},
		Labels:      labels,
		Dockerfile:  "Dockerfile",
		Remove:      true,
		ForceRemove: true,
		NetworkMode: "none",
		Version:     build.BuilderV1, // BuildKit needs a session this client does not run
	}
	if net.Mode != "" {
		opts.NetworkMode, opts.NoCache = net.Mode, true
		opts.BuildArgs = map[string]*string{}
		for k, v := range net.Args {
			opts.BuildArgs[k] = &v
		}
	}
	res, err := e.cli.ImageBuild(ctx, archive, opts)
	if err != nil {
		return fmt.Errorf("build %s: %w", ref, err)
	}
	defer res.Body.Close()
	if out, err := readStream(res.Body, log); err != nil {
		return fmt.Errorf("build %s: %w\n--- end of the build output ---\n%s", ref, err, lastLines(out, 40))
	}
	return e.mustExist(ctx, "build", ref)
}

// mustExist checks that an import or build that reported success made its
// image: a stream cut short between two messages looks like success.
func (e *Engine) mustExist(ctx context.Context, op, ref string) error {
	ok, err := e.ImageExists(ctx, ref)
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, ref, err)
	}
	if !ok {
		return fmt.Errorf("%s %s: the engine reported success but has no such image", op, ref)
	}
	return nil
}

// streamMessage is one message of the JSON stream of a build or import.
type streamMessage struct {
	Aux         json.RawMessage `json:"aux"`
	Stream      string          `json:"stream"`
	Status      string          `json:"status"`
	Error       string          `json:"error"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

// ansiEscape matches terminal colour sequences.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// maxStreamTail is how much of a stream's text readStream keeps.
const maxStreamTail = 64 << 10

// readStream reads a JSON message stream to its end, copying its text to
// log (if not nil). It returns the end of the text, and an error holding
// the message of an error message in the stream, which the engine sends
// with HTTP status 200.
func readStream(r io.Reader, log io.Writer) ([]byte, error) {
	return readStreamAux(r, log, nil)
}

// readStreamAux is readStream that hands each message's aux part (a
// push's digest, say) to aux, when not nil.
func readStreamAux(r io.Reader, log io.Writer, aux func(json.RawMessage)) ([]byte, error) {
	out := newTail(maxStreamTail)
	dec := json.NewDecoder(r)
	var failure error
	for {
		var m streamMessage
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out.Bytes(), failure
			}
			return out.Bytes(), errors.Join(failure, fmt.Errorf("reading the engine's messages: %w", err))
		}
		if aux != nil && len(m.Aux) > 0 {
			aux(m.Aux)
		}
		text := m.Stream
		if text == "" && m.Status != "" {
			text = m.Status + "\n"
		}
		// The classic builder colours a command's stderr.
		text = ansiEscape.ReplaceAllString(text, "")
		if text != "" {
			_, _ = out.Write([]byte(text))
			if log != nil {
				_, _ = io.WriteString(log, text)
			}
		}
		msg := m.Error
		if msg == "" && m.ErrorDetail != nil {
			msg = m.ErrorDetail.Message
		}
		if msg != "" && failure == nil {
			failure = errors.New(strings.TrimSpace(msg))
		}
	}
}

// lastLines returns the last n lines of b.
func lastLines(b []byte, n int) string {
	s := strings.TrimRight(string(b), "\n")
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		i = strings.LastIndexByte(s[:i], '\n')
		if i < 0 {
			return s
		}
	}
	return s[i+1:]
}

// Images lists the images that have every label of labelFilter (a label
// with an empty value matches any value).
func (e *Engine) Images(ctx context.Context, labelFilter map[string]string) ([]Image, error) {
	res, err := e.cli.ImageList(ctx, client.ImageListOptions{Filters: labelFilters(labelFilter)})
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	out := make([]Image, 0, len(res.Items))
	for _, it := range res.Items {
		img := Image{ID: it.ID, Labels: it.Labels, Created: time.Unix(it.Created, 0), Size: it.Size}
		for _, t := range it.RepoTags {
			if t != "<none>:<none>" {
				img.Ref = t
				break
			}
		}
		out = append(out, img)
	}
	return out, nil
}

// RemoveImage removes the image ref (a tag or an ID), with every tag it
// has when ref is an ID. An image already gone is not an error.
func (e *Engine) RemoveImage(ctx context.Context, ref string) error {
	_, err := e.cli.ImageRemove(ctx, ref, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove image %s: %w", ref, err)
	}
	return nil
}

// labelFilters turns a label filter into the engine's filter.
func labelFilters(labels map[string]string) client.Filters {
	f := make(client.Filters)
	for k, v := range labels {
		if v == "" {
			f.Add("label", k)
		} else {
			f.Add("label", k+"="+v)
		}
	}
	return f
}
