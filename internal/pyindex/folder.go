package pyindex

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Folder serves the wheels and source archives of a folder (not its
// subfolders) as a package index:
//
//	/simple/           the projects (PEP 503's root page, or its JSON)
//	/simple/NAME/      a project's files, with sha256 hashes, upload times
//	                   (each file's modification time) and sizes
//	/files/FILENAME    a file
//
// It reads the folder at each request, so files added later are served;
// hashes are kept while a file's size and time stay the same.
type Folder struct {
	dir string

	mu     sync.Mutex
	hashes map[string]folderHash // by file name
}

type folderHash struct {
	size int64
	mod  time.Time
	hex  string
}

// NewFolder serves dir.
func NewFolder(dir string) *Folder {
	return &Folder{dir: dir, hashes: map[string]folderHash{}}
}

// folderFile is one distribution file of the folder.
type folderFile struct {
	name, project string
	info          os.FileInfo
}

// files lists the folder's distribution files, by project.
func (f *Folder) files() (map[string][]folderFile, error) {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]folderFile{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		project, _, ok := ParseFilename(e.Name())
		if !ok {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, err
		}
		out[project] = append(out[project], folderFile{name: e.Name(), project: project, info: info})
	}
	return out, nil
}

// hash is a file's sha256, computed once per size and time.
func (f *Folder) hash(ff folderFile) (string, error) {
	f.mu.Lock()
	h, ok := f.hashes[ff.name]
	f.mu.Unlock()
	if ok && h.size == ff.info.Size() && h.mod.Equal(ff.info.ModTime()) {
		return h.hex, nil
	}
	r, err := os.Open(filepath.Join(f.dir, ff.name))
	if err != nil {
		return "", err
	}
	defer r.Close()
	s := sha256.New()
	if _, err := io.Copy(s, r); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(s.Sum(nil))
	f.mu.Lock()
	f.hashes[ff.name] = folderHash{size: ff.info.Size(), mod: ff.info.ModTime(), hex: sum}
	f.mu.Unlock()
	return sum, nil
}

func (f *Folder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	switch {
	case p == "/simple/" || p == "/simple":
		f.serveRoot(w, r)
	case strings.HasPrefix(p, "/simple/"):
		name := strings.Trim(strings.TrimPrefix(p, "/simple/"), "/")
		if strings.Contains(name, "/") || !ValidName(name) {
			http.NotFound(w, r)
			return
		}
		if norm := Normalize(name); norm != name || !strings.HasSuffix(p, "/") {
			// PEP 503: the normalized name, with its slash.
			http.Redirect(w, r, "/simple/"+norm+"/", http.StatusMovedPermanently)
			return
		}
		f.serveProject(w, r, name)
	case strings.HasPrefix(p, "/files/"):
		name := strings.TrimPrefix(p, "/files/")
		if name == "" || strings.ContainsAny(name, "/\\") || name != path.Base(name) || strings.HasPrefix(name, ".") {
			http.NotFound(w, r)
			return
		}
		if _, _, ok := ParseFilename(name); !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		http.ServeFile(w, r, filepath.Join(f.dir, name))
	default:
		http.NotFound(w, r)
	}
}

func (f *Folder) serveRoot(w http.ResponseWriter, r *http.Request) {
	all, err := f.files()
	if err != nil {
		http.Error(w, "reading the folder: "+err.Error(), http.StatusInternalServerError)
		return
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	slices.Sort(names)
	if WantsJSON(r.Header.Get("Accept"), r.URL.Query().Get("format")) {
		w.Header().Set("Content-Type", JSONType)
		var b strings.Builder
		fmt.Fprintf(&b, `{"meta": {"api-version": %q}, "projects": [`, apiVersion)
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `{"name": %q}`, n)
		}
		b.WriteString("]}\n")
		_, _ = io.WriteString(w, b.String())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.1\"><title>Simple index</title></head><body>\n")
	for _, n := range names {
		fmt.Fprintf(&b, "<a href=\"%s/\">%s</a><br>\n", html.EscapeString(n), html.EscapeString(n))
	}
	b.WriteString("</body></html>\n")
	_, _ = io.WriteString(w, b.String())
}

func (f *Folder) serveProject(w http.ResponseWriter, r *http.Request, name string) {
	all, err := f.files()
	if err != nil {
		http.Error(w, "reading the folder: "+err.Error(), http.StatusInternalServerError)
		return
	}
	files := all[name]
	if len(files) == 0 {
		http.NotFound(w, r)
		return
	}
	slices.SortFunc(files, func(a, b folderFile) int { return strings.Compare(a.name, b.name) })
	page := &Page{Name: name}
	for _, ff := range files {
		sum, err := f.hash(ff)
		if err != nil {
			http.Error(w, "hashing "+ff.name+": "+err.Error(), http.StatusInternalServerError)
			return
		}
		page.Files = append(page.Files, File{
			Filename: ff.name, URL: "../../files/" + ff.name, Hashes: map[string]string{"sha256": sum},
			UploadTime: ff.info.ModTime().UTC().Truncate(time.Microsecond), Size: ff.info.Size(),
		})
	}
	asJSON := WantsJSON(r.Header.Get("Accept"), r.URL.Query().Get("format"))
	var b strings.Builder
	ct, err := Write(&b, page, asJSON)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Vary", "Accept")
	_, _ = io.WriteString(w, b.String())
}
