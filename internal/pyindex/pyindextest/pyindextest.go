// Package pyindextest gives tests a package index on this machine
// (pyindex.Folder over loopback) and wheels to put in it, made from what a
// CI machine has: small packages the tests write (Wheel), and Python
// packages Debian installed in a base image, repackaged (DebianWheels).
package pyindextest

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/pyindex"
)

//go:embed repack.py
var repack []byte

// Index is a folder of wheels served as a package index.
type Index struct {
	Dir string // the folder; files added later are served too
	URL string // the simple API's URL: http://127.0.0.1:PORT/simple/
	srv *http.Server
}

// Serve serves dir as an index on a loopback port until the test ends.
func Serve(t testing.TB, dir string) *Index {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: pyindex.NewFolder(dir), ReadHeaderTimeout: time.Minute}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &Index{Dir: dir, URL: "http://" + ln.Addr().String() + "/simple/", srv: srv}
}

// Port is the index's port on this machine.
func (ix *Index) Port() string {
	_, port, _ := strings.Cut(strings.TrimPrefix(ix.URL, "http://127.0.0.1"), ":")
	port, _, _ = strings.Cut(port, "/")
	return port
}

// Add writes a wheel into the index, uploaded at when (its modification
// time, which the index gives as its upload time), and returns its file
// name.
func (ix *Index) Add(t testing.TB, filename string, data []byte, when time.Time) string {
	t.Helper()
	p := filepath.Join(ix.Dir, filename)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, when, when); err != nil {
		t.Fatal(err)
	}
	return filename
}

// Wheel makes a pure-Python wheel of a project: files by their path in
// the wheel, and METADATA lines beyond Name and Version (Requires-Dist:
// ...). It returns the wheel's file name and contents.
func Wheel(name, version string, files map[string]string, metadata ...string) (string, []byte) {
	stem := regexp.MustCompile(`[-_.]+`).ReplaceAllString(name, "_") + "-" + version
	dist := stem + ".dist-info/"
	all := map[string]string{}
	for p, d := range files {
		all[p] = d
	}
	all[dist+"METADATA"] = "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n" + strings.Join(append(metadata, ""), "\n")
	all[dist+"WHEEL"] = "Wheel-Version: 1.0\nGenerator: featbench-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	var record []string
	names := make([]string, 0, len(all))
	for p := range all {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		w, _ := z.CreateHeader(&zip.FileHeader{Name: p, Method: zip.Deflate, Modified: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)})
		w.Write([]byte(all[p]))
		sum := sha256.Sum256([]byte(all[p]))
		record = append(record, fmt.Sprintf("%s,sha256=%s,%d", p, base64.RawURLEncoding.EncodeToString(sum[:]), len(all[p])))
	}
	record = append(record, dist+"RECORD,,")
	w, _ := z.CreateHeader(&zip.FileHeader{Name: dist + "RECORD", Method: zip.Deflate, Modified: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)})
	w.Write([]byte(strings.Join(record, "\n") + "\n"))
	z.Close()
	return stem + "-py3-none-any.whl", b.Bytes()
}

// Starter starts containers: *container.Engine.
type Starter interface {
	Start(ctx context.Context, spec container.Spec) (*container.Container, error)
}

// DebianWheels repackages Python packages Debian installed in image (a
// base image) into wheels in dir, and returns their file names: Debian's
// files and dist-info metadata, made a wheel again (repack.py).
func DebianWheels(t testing.TB, eng Starter, image, dir string, debs ...string) []string {
	t.Helper()
	ctx := context.Background()
	c, err := eng.Start(ctx, container.Spec{Image: image, Name: "featbench-test-repack", Labels: map[string]string{"featbench.test": "repack"},
		WorkDir: "/", Limits: container.Limits{Memory: 1 << 30, Pids: 256}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove()
	if err := c.CopyIn(ctx, "/fb", []container.File{{Path: "repack.py", Mode: 0o644, Data: repack}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Exec(ctx, append([]string{"python3", "-I", "/fb/repack.py", "/fb/wheels"}, debs...), container.ExecOptions{Timeout: 5 * time.Minute})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("repacking %s: %v %s%s", debs, err, res.Stdout, res.Stderr)
	}
	files, err := c.CopyOut(ctx, "/fb/wheels", 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".whl") {
			continue
		}
		name := filepath.Base(f.Path)
		if err := os.WriteFile(filepath.Join(dir, name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) != len(debs) {
		t.Fatalf("repacking %s gave %s", debs, names)
	}
	return names
}
