package pyindex

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseFilename(t *testing.T) {
	for _, c := range []struct{ in, name, version string }{
		{"pluggy-1.5.0-py3-none-any.whl", "pluggy", "1.5.0"},
		{"Foo_Bar-2.0-1-py3-none-any.whl", "foo-bar", "2.0"},
		{"zope.interface-6.0.tar.gz", "zope-interface", "6.0"},
		{"my-old-pkg-0.1.zip", "my-old-pkg", "0.1"},
	} {
		name, version, ok := ParseFilename(c.in)
		if !ok || name != c.name || version != c.version {
			t.Errorf("ParseFilename(%q) = %q, %q, %v; want %q, %q", c.in, name, version, ok, c.name, c.version)
		}
	}
	for _, bad := range []string{"x.whl", "a-b.whl", "notes.txt", "-1.0.tar.gz", "../x-1.0.tar.gz", "pkg-.tar.gz"} {
		if n, v, ok := ParseFilename(bad); ok {
			t.Errorf("ParseFilename(%q) = %q, %q; want refused", bad, n, v)
		}
	}
}

func TestWantsJSON(t *testing.T) {
	for _, c := range []struct {
		accept, format string
		want           bool
	}{
		{Accept, "", true},
		{"application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01", "", true},
		{"text/html", "", false},
		{"", "", false},
		{"text/html, application/vnd.pypi.simple.v1+json;q=0.5", "", false},
		{"application/vnd.pypi.simple.v1+json;q=0", "", false},
		{"text/html", JSONType, true},
	} {
		if got := WantsJSON(c.accept, c.format); got != c.want {
			t.Errorf("WantsJSON(%q, %q) = %v; want %v", c.accept, c.format, got, c.want)
		}
	}
}

// TestPageRoundTrip: a page written in either form reads back the same,
// but for what HTML cannot say (upload times, sizes, hashes other than
// sha256).
func TestPageRoundTrip(t *testing.T) {
	up := time.Date(2024, 5, 1, 12, 30, 0, 123456000, time.UTC)
	p := &Page{Name: "demo", Files: []File{
		{Filename: "demo-1.0-py3-none-any.whl", URL: "../../files/demo-1.0-py3-none-any.whl", Hashes: map[string]string{"sha256": "ab12"}, RequiresPython: ">=3.8", UploadTime: up, Size: 10},
		{Filename: "demo-0.9.tar.gz", URL: "https://files.example/demo-0.9.tar.gz", Hashes: map[string]string{"sha256": "cd34"}, Yanked: true, YankedReason: "broken <b>", Size: -1},
	}}
	for _, asJSON := range []bool{true, false} {
		var b bytes.Buffer
		ct, err := Write(&b, p, asJSON)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(&b, ct, "http://index.example/simple/demo/")
		if err != nil {
			t.Fatalf("json %v: %v\n%s", asJSON, err, b.String())
		}
		if len(got.Files) != 2 {
			t.Fatalf("json %v: %d files", asJSON, len(got.Files))
		}
		f0, f1 := got.Files[0], got.Files[1]
		if f0.URL != "http://index.example/files/demo-1.0-py3-none-any.whl" || f0.Hashes["sha256"] != "ab12" || f0.RequiresPython != ">=3.8" || f0.Yanked {
			t.Errorf("json %v: first file %+v", asJSON, f0)
		}
		if !f1.Yanked || f1.YankedReason != "broken <b>" || f1.URL != "https://files.example/demo-0.9.tar.gz" {
			t.Errorf("json %v: second file %+v", asJSON, f1)
		}
		if asJSON && (!f0.UploadTime.Equal(up) || f0.Size != 10 || !f1.UploadTime.IsZero()) {
			t.Errorf("upload times or sizes lost in JSON: %+v %+v", f0, f1)
		}
		if !asJSON && !f0.UploadTime.IsZero() {
			t.Errorf("HTML gave an upload time: %+v", f0)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ ct, body, want string }{
		{JSONType, `{"meta": {"api-version": "2.0"}, "files": []}`, "API version"},
		{JSONType, `{"meta": {"api-version": "1.0"}, "files": [{"filename": "a-1.tar.gz", "url": "x", "upload-time": "yesterday"}]}`, "not an ISO 8601 time"},
		{JSONType, `{"meta": {"api-version": "1.0"}, "files": [{"filename": "a-1.tar.gz", "url": "x", "yanked": 3}]}`, "neither a boolean nor a reason"},
		{JSONType, `[`, "not PEP 691 JSON"},
		{"application/zip", "PK", "neither PEP 691's JSON nor HTML"},
	} {
		_, err := Parse(strings.NewReader(c.body), c.ct, "http://x/simple/a/")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s %q): %v; want %q", c.ct, c.body, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`{"meta": {"api-version": "1.1"}, "name": "a", "files": [{"filename": "a-1.0-py3-none-any.whl", "url": "../x", "hashes": {"sha256": "00"}, "upload-time": "2024-01-01T00:00:00Z"}]}`, true)
	f.Add(`<a href="x#sha256=00" data-yanked="">a-1.0.tar.gz</a>`, false)
	f.Fuzz(func(t *testing.T, body string, asJSON bool) {
		ct := "text/html"
		if asJSON {
			ct = JSONType
		}
		p, err := Parse(strings.NewReader(body), ct, "http://x/simple/a/")
		if err != nil {
			return
		}
		// What Parse accepts, Write writes and Parse reads again.
		var b bytes.Buffer
		ct2, err := Write(&b, p, asJSON)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(&b, ct2, "http://x/simple/a/"); err != nil {
			t.Fatalf("a page written from a parsed one does not parse: %v\n%s", err, b.String())
		}
	})
}

// writeWheel writes a minimal wheel of name and version into dir.
func writeWheel(t *testing.T, dir, name, version string) string {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	w, _ := z.Create(name + "-" + version + ".dist-info/METADATA")
	io.WriteString(w, "Metadata-Version: 2.1\nName: "+name+"\nVersion: "+version+"\n")
	z.Close()
	file := filepath.Join(dir, name+"-"+version+"-py3-none-any.whl")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestFolder: the folder's files are served with their hashes, upload
// times and sizes, in the form asked for, under normalized names; what is
// not a distribution file, or outside the folder, is not served.
func TestFolder(t *testing.T) {
	dir := t.TempDir()
	file := writeWheel(t, dir, "Demo_Pkg", "1.0")
	when := time.Date(2023, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := os.Chtimes(file, when, when); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("secret"), 0o644)
	srv := httptest.NewServer(NewFolder(dir))
	defer srv.Close()

	get := func(path, accept string) *http.Response {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	data, _ := os.ReadFile(file)
	sum := sha256.Sum256(data)
	for _, accept := range []string{Accept, "text/html"} {
		res := get("/simple/Demo.Pkg", accept) // redirected to /simple/demo-pkg/
		page, err := Parse(res.Body, res.Header.Get("Content-Type"), res.Request.URL.String())
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Files) != 1 {
			t.Fatalf("%d files; want 1", len(page.Files))
		}
		f := page.Files[0]
		if f.Hashes["sha256"] != hex.EncodeToString(sum[:]) || f.URL != srv.URL+"/files/Demo_Pkg-1.0-py3-none-any.whl" {
			t.Errorf("file %+v", f)
		}
		if accept == Accept && (!f.UploadTime.Equal(when) || f.Size != int64(len(data))) {
			t.Errorf("JSON: upload time %s, size %d; want %s, %d", f.UploadTime, f.Size, when, len(data))
		}
		fres := get("/files/Demo_Pkg-1.0-py3-none-any.whl", "")
		got, _ := io.ReadAll(fres.Body)
		fres.Body.Close()
		if !bytes.Equal(got, data) {
			t.Errorf("the file served differs")
		}
	}
	for _, p := range []string{"/files/notes.txt", "/files/..%2fetc%2fpasswd", "/simple/notes/", "/simple/../files/", "/other"} {
		res := get(p, "")
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s; want 404", p, res.Status)
		}
	}
	res := get("/simple/", Accept)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"name": "demo-pkg"`) || strings.Contains(string(body), "notes") {
		t.Errorf("root page: %s", body)
	}
}

func TestPipIndexes(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if i, e, from := PipIndexes(getenv, home); i != PyPI || e != nil || from != "pip's default" {
		t.Errorf("nothing configured: %q %q %q", i, e, from)
	}
	conf := filepath.Join(home, ".config", "pip", "pip.conf")
	os.MkdirAll(filepath.Dir(conf), 0o755)
	os.WriteFile(conf, []byte("[global]\nindex-url = https://mirror.example/simple/\nextra-index-url =\n    https://a.example/simple/\n    https://b.example/simple/\n[download]\nindex-url = https://other.example/\n"), 0o644)
	i, e, from := PipIndexes(getenv, home)
	if i != "https://mirror.example/simple/" || strings.Join(e, " ") != "https://a.example/simple/ https://b.example/simple/" || from != conf {
		t.Errorf("pip.conf: %q %q %q", i, e, from)
	}
	env["PIP_INDEX_URL"] = "http://127.0.0.1:8080/simple/"
	if i, _, from := PipIndexes(getenv, home); i != "http://127.0.0.1:8080/simple/" || from != "PIP_INDEX_URL" {
		t.Errorf("PIP_INDEX_URL: %q %q", i, from)
	}
}
