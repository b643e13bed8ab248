package gate

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/pyindex"
	"github.com/featbench/featbench/internal/pylock"
)

// These tests serve the proxy over a plain listener, with a real index
// (pyindex.Folder) or a misbehaving one behind it; gate_test.go runs it
// behind the relay, for a real build.

// wheel writes a minimal wheel into dir, uploaded at when, and returns
// its sha256.
func wheel(t *testing.T, dir, name, version string, when time.Time) string {
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
	if err := os.Chtimes(file, when, when); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// through serves p and returns a client whose requests for the gate's
// address go to it.
func through(t *testing.T, p *Proxy) (*http.Client, func(path string, accept string) (*http.Response, []byte)) {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	target, _ := url.Parse(srv.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(target)}}
	get := func(path, accept string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, body
	}
	return client, get
}

// TestProxyServesIndex: a page comes back pointing at the gate, the file
// through it is the index's, and the gate records what it served.
func TestProxyServesIndex(t *testing.T) {
	dir := t.TempDir()
	sum := wheel(t, dir, "demo", "1.0", time.Now())
	idx := httptest.NewServer(pyindex.NewFolder(dir))
	defer idx.Close()
	p, err := NewProxy(Options{Indexes: []string{idx.URL + "/simple/"}})
	if err != nil {
		t.Fatal(err)
	}
	_, get := through(t, p)
	for _, accept := range []string{pyindex.Accept, "text/html"} {
		res, body := get("/index/0/Demo/", accept)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %s", res.Status, body)
		}
		page, err := pyindex.Parse(bytes.NewReader(body), res.Header.Get("Content-Type"), "http://"+Addr+"/index/0/demo/")
		if err != nil || len(page.Files) != 1 {
			t.Fatalf("%v %+v", err, page)
		}
		f := page.Files[0]
		if !strings.HasPrefix(f.URL, "http://"+Addr+"/file/") || f.Hashes["sha256"] != sum {
			t.Fatalf("file %+v", f)
		}
		u, _ := url.Parse(f.URL)
		res, data := get(u.Path, "")
		got := sha256.Sum256(data)
		if res.StatusCode != 200 || hex.EncodeToString(got[:]) != sum {
			t.Fatalf("file: %s, sha256 %x", res.Status, got)
		}
	}
	d := p.Downloads()
	if len(d) != 2 || d[0].Project != "demo" || d[0].Version != "1.0" || d[0].SHA256 != sum {
		t.Errorf("downloads %+v", d)
	}
	if pr := p.Problems(); len(pr) != 0 {
		t.Errorf("problems %q", pr)
	}
	// A file no page named is not fetched, whatever its path says.
	if res, _ := get("/file/0123/demo-1.0-py3-none-any.whl", ""); res.StatusCode != 404 {
		t.Errorf("an unnamed file: %s", res.Status)
	}
}

// TestProxyExcludeNewer: files uploaded after Before are left off the
// page; an index that gives no upload times gets a note instead.
func TestProxyExcludeNewer(t *testing.T) {
	dir := t.TempDir()
	cut := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	wheel(t, dir, "demo", "1.0", cut.Add(-time.Hour))
	wheel(t, dir, "demo", "2.0", cut.Add(time.Hour))
	idx := httptest.NewServer(pyindex.NewFolder(dir))
	defer idx.Close()
	p, _ := NewProxy(Options{Indexes: []string{idx.URL + "/simple/"}, Before: cut})
	_, get := through(t, p)
	_, body := get("/index/0/demo/", pyindex.Accept)
	if !strings.Contains(string(body), "demo-1.0-py3") || strings.Contains(string(body), "demo-2.0") {
		t.Errorf("page: %s", body)
	}
	if n := p.Notes(); len(n) != 0 {
		t.Errorf("notes %q", n)
	}
	// An index speaking HTML only: nothing to filter by.
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Accept", "text/html")
		pyindex.NewFolder(dir).ServeHTTP(w, r)
	}))
	defer html.Close()
	p, _ = NewProxy(Options{Indexes: []string{html.URL + "/simple/"}, Before: cut})
	_, get = through(t, p)
	_, body = get("/index/0/demo/", pyindex.Accept)
	if !strings.Contains(string(body), "demo-2.0") {
		t.Errorf("page: %s", body)
	}
	if n := p.Notes(); len(n) != 1 || !strings.Contains(n[0], "gives no upload times") {
		t.Errorf("notes %q", n)
	}
}

// TestProxyRefusesBadFiles: a file whose hash differs from its page's or
// from the lock's is not served, and the problem names both hashes.
func TestProxyRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	sum := wheel(t, dir, "demo", "1.0", time.Now())
	idx := httptest.NewServer(pyindex.NewFolder(dir))
	defer idx.Close()
	other := strings.Repeat("ab", 32)
	p, _ := NewProxy(Options{Indexes: []string{idx.URL + "/simple/"}, Lock: []pylock.Package{{Name: "demo", Version: "1.0", Hashes: []string{"sha256:" + other}}}})
	_, get := through(t, p)
	_, body := get("/index/0/demo/", "text/html")
	page, _ := pyindex.Parse(bytes.NewReader(body), "text/html", "http://"+Addr+"/index/0/demo/")
	u, _ := url.Parse(page.Files[0].URL)
	res, body := get(u.Path, "")
	if res.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "the dataset's lock pins demo 1.0 to sha256:"+other) || !strings.Contains(string(body), sum) {
		t.Errorf("%s: %s", res.Status, body)
	}
	if len(p.Downloads()) != 0 || len(p.Problems()) != 1 {
		t.Errorf("downloads %v, problems %q", p.Downloads(), p.Problems())
	}

	// An index whose page lies about the file.
	liar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/simple/") {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="/files/demo-1.0-py3-none-any.whl#sha256=`+other+`">demo-1.0-py3-none-any.whl</a>`)
			return
		}
		pyindex.NewFolder(dir).ServeHTTP(w, r)
	}))
	defer liar.Close()
	p, _ = NewProxy(Options{Indexes: []string{liar.URL + "/simple/"}})
	_, get = through(t, p)
	_, body = get("/index/0/demo/", "text/html")
	page, _ = pyindex.Parse(bytes.NewReader(body), "text/html", "http://"+Addr+"/index/0/demo/")
	u, _ = url.Parse(page.Files[0].URL)
	res, body = get(u.Path, "")
	if res.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "where its page says "+other) {
		t.Errorf("%s: %s", res.Status, body)
	}
}

// TestProxyTimeout: an index that does not answer, or stops in the middle
// of a file, gets a 504 within the timeout, and the problem says so.
func TestProxyTimeout(t *testing.T) {
	dir := t.TempDir()
	wheel(t, dir, "demo", "1.0", time.Now())
	stall := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/simple/stuck/") {
			<-stall
			return
		}
		if strings.HasPrefix(r.URL.Path, "/files/") {
			w.Header().Set("Content-Length", "100000")
			w.Write(make([]byte, 1000))
			w.(http.Flusher).Flush()
			<-stall
			return
		}
		pyindex.NewFolder(dir).ServeHTTP(w, r)
	}))
	defer slow.Close()
	defer close(stall) // before the server's Close, which waits for its handlers
	p, _ := NewProxy(Options{Indexes: []string{slow.URL + "/simple/"}, Timeout: 300 * time.Millisecond})
	_, get := through(t, p)
	begin := time.Now()
	res, body := get("/index/0/stuck/", "")
	if res.StatusCode != http.StatusGatewayTimeout || !strings.Contains(string(body), "did not answer within 300ms (timeout)") {
		t.Errorf("%s: %s", res.Status, body)
	}
	_, body = get("/index/0/demo/", "text/html")
	page, _ := pyindex.Parse(bytes.NewReader(body), "text/html", "http://"+Addr+"/index/0/demo/")
	u, _ := url.Parse(page.Files[0].URL)
	res, body = get(u.Path, "")
	if res.StatusCode != http.StatusGatewayTimeout || !strings.Contains(string(body), "demo-1.0-py3-none-any.whl") {
		t.Errorf("%s: %s", res.Status, body)
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
	if pr := p.Problems(); len(pr) != 2 {
		t.Errorf("problems %q", pr)
	}
}

// TestProxyForwardsOnlyAllowed: as an HTTP proxy the gate reaches the
// hosts it was given, and refuses others, CONNECT included.
func TestProxyForwardsOnlyAllowed(t *testing.T) {
	dir := t.TempDir()
	wheel(t, dir, "demo", "1.0", time.Now())
	idx := httptest.NewServer(pyindex.NewFolder(dir))
	defer idx.Close()
	host := strings.TrimPrefix(idx.URL, "http://")
	p, _ := NewProxy(Options{Forward: []string{host}})
	client, _ := through(t, p)
	res, err := client.Get(idx.URL + "/simple/demo/")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("allowed: %v %v", err, res)
	}
	res.Body.Close()
	p, _ = NewProxy(Options{Forward: []string{"deb.debian.org:80"}})
	client, _ = through(t, p)
	res, err = client.Get(idx.URL + "/simple/demo/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(body), host+" is not reachable from the build; it may reach only deb.debian.org:80") {
		t.Errorf("refused: %s %s", res.Status, body)
	}
	if _, err := client.Get("https://" + host + "/"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("CONNECT to a host not allowed: %v", err)
	}
}
