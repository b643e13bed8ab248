package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/featbench/featbench/internal/pyindex"
	"github.com/featbench/featbench/internal/pylock"
)

// maxFile bounds a file the gate fetches for a build.
const maxFile = 2 << 30

// Download is a file the gate served.
type Download struct {
	Project  string // normalized
	Version  string
	Filename string
	SHA256   string // hex
	URL      string // where the index had it
}

// Proxy is the gate's proxy, an http.Handler: Open serves it over the
// relay, and a test may serve it over a plain listener.
type Proxy struct {
	o       Options
	indexes []*url.URL
	forward map[string]bool
	lock    map[string]pylock.Package
	client  *http.Client
	timeout time.Duration

	mu        sync.Mutex
	files     map[string]fileEntry // by token
	downloads []Download

	problems, notes record
}

// fileEntry is a file a page named, as the gate points at it.
type fileEntry struct {
	index    int
	url      string
	filename string
	sha256   string // as the page gave it; "" when it gave none
}

// NewProxy makes the proxy of a gate, checking o's URLs.
func NewProxy(o Options) (*Proxy, error) {
	p := &Proxy{o: o, forward: map[string]bool{}, lock: map[string]pylock.Package{}, files: map[string]fileEntry{}, timeout: o.Timeout}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	for i, s := range o.Indexes {
		if why := checkIndexURL(s); why != "" {
			return nil, fmt.Errorf("build gate: index %d (%s): %s", i, s, why)
		}
		u, _ := url.Parse(s)
		p.indexes = append(p.indexes, u)
	}
	for _, f := range o.Forward {
		if _, _, err := net.SplitHostPort(f); err != nil {
			return nil, fmt.Errorf("build gate: forward %q is not host:port", f)
		}
		p.forward[strings.ToLower(f)] = true
	}
	for _, l := range o.Lock {
		p.lock[l.Name] = l
	}
	dialer := &net.Dialer{Timeout: p.timeout}
	p.client = &http.Client{
		Transport: &http.Transport{
			// The user's own proxy, if any, is how this machine reaches
			// the index.
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   p.timeout,
			ResponseHeaderTimeout: p.timeout,
			MaxIdleConnsPerHost:   8,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("more than 5 redirects")
			}
			return nil
		},
	}
	return p, nil
}

// Downloads lists the files the gate served, in the order served.
func (p *Proxy) Downloads() []Download {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.downloads)
}

// Problems lists what went wrong behind the gate: requests refused,
// indexes that failed or did not answer in time, files whose hashes
// differed.
func (p *Proxy) Problems() []string { return p.problems.list() }

// Notes lists what the gate could not do as asked without failing: an
// index that gives no upload times, so exclude_newer could not apply.
func (p *Proxy) Notes() []string { return p.notes.list() }

func (p *Proxy) logf(format string, args ...any) {
	if p.o.Log != nil {
		fmt.Fprintf(p.o.Log, "gate: "+format+"\n", args...)
	}
}

// fail answers a request with an error the build's log shows, and
// records it.
func (p *Proxy) fail(w http.ResponseWriter, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.problems.add("%s", msg)
	p.logf("%d %s", status, msg)
	http.Error(w, "featbench build gate: "+msg, status)
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.serveConnect(w, r)
	case r.URL.IsAbs():
		p.serveForward(w, r)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		p.fail(w, http.StatusMethodNotAllowed, "%s %s: the gate serves only GET", r.Method, r.URL.Path)
	case strings.HasPrefix(r.URL.Path, "/index/"):
		rest := strings.TrimPrefix(r.URL.Path, "/index/")
		n, project, ok := strings.Cut(rest, "/")
		i, err := strconv.Atoi(n)
		project = strings.TrimSuffix(project, "/")
		if !ok || err != nil || i < 0 || i >= len(p.indexes) || project == "" || strings.Contains(project, "/") {
			if ok && err == nil && project == "" && i >= 0 && i < len(p.indexes) {
				// The index's root page: pip never needs it, and listing
				// every project of PyPI through the gate would be slow.
				http.Error(w, "featbench build gate: no root page; ask for a project's", http.StatusNotFound)
				return
			}
			http.NotFound(w, r)
			return
		}
		if !pyindex.ValidName(project) {
			p.fail(w, http.StatusNotFound, "%q is not a project name", project)
			return
		}
		p.servePage(w, r, i, project)
	case strings.HasPrefix(r.URL.Path, "/file/"):
		token, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/file/"), "/")
		p.mu.Lock()
		e, ok := p.files[token]
		p.mu.Unlock()
		if !ok {
			p.fail(w, http.StatusNotFound, "%s: no page the gate served named this file", r.URL.Path)
			return
		}
		p.serveFile(w, r, e)
	default:
		p.fail(w, http.StatusNotFound, "GET %s: the gate serves only package indexes (%s)", r.URL.Path, strings.Join(p.o.Indexes, ", "))
	}
}

// servePage serves project's page of index i, filtered and pointed at the
// gate.
func (p *Proxy) servePage(w http.ResponseWriter, r *http.Request, i int, project string) {
	index := p.o.Indexes[i]
	upstream := strings.TrimSuffix(index, "/") + "/" + pyindex.Normalize(project) + "/"
	ctx, cancel := context.WithTimeout(r.Context(), p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, upstream, nil)
	if err != nil {
		p.fail(w, http.StatusBadGateway, "%s: %v", upstream, err)
		return
	}
	req.Header.Set("Accept", pyindex.Accept)
	res, err := p.client.Do(req)
	if err != nil {
		p.upstreamFailed(w, ctx, upstream, err)
		return
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotFound:
		p.problems.add("the index %s has no project %s (404)", index, project)
		p.logf("404 %s", upstream)
		http.NotFound(w, r)
		return
	case res.StatusCode != http.StatusOK:
		p.fail(w, http.StatusBadGateway, "the index %s answered %s for %s", index, res.Status, upstream)
		return
	}
	page, err := pyindex.Parse(res.Body, res.Header.Get("Content-Type"), res.Request.URL.String())
	if err != nil {
		if ctx.Err() != nil {
			p.upstreamFailed(w, ctx, upstream, err)
			return
		}
		p.fail(w, http.StatusBadGateway, "the index %s: %v", index, err)
		return
	}
	kept := page.Files[:0]
	late, undated := 0, 0
	for _, f := range page.Files {
		if !p.o.Before.IsZero() {
			if f.UploadTime.IsZero() {
				undated++
			} else if f.UploadTime.After(p.o.Before) {
				late++
				continue
			}
		}
		token := fileToken(f.URL)
		sum := f.Hashes["sha256"]
		p.mu.Lock()
		p.files[token] = fileEntry{index: i, url: f.URL, filename: f.Filename, sha256: sum}
		p.mu.Unlock()
		f.URL = "http://" + Addr + "/file/" + token + "/" + url.PathEscape(f.Filename)
		kept = append(kept, f)
	}
	page.Files = kept
	if undated > 0 {
		p.notes.add("exclude_newer: the index %s gives no upload times (PEP 700's upload-time in its JSON pages), so the files it serves are not limited by date", index)
	}
	if late > 0 && len(kept) == 0 {
		p.problems.add("exclude_newer: every file of %s on %s was uploaded after %s", project, index, p.o.Before.Format(time.RFC3339))
	}
	if page.Name == "" {
		page.Name = pyindex.Normalize(project)
	}
	asJSON := pyindex.WantsJSON(r.Header.Get("Accept"), r.URL.Query().Get("format"))
	var b strings.Builder
	ct, err := pyindex.Write(&b, page, asJSON)
	if err != nil {
		p.fail(w, http.StatusBadGateway, "the index %s: %v", index, err)
		return
	}
	p.logf("200 %s (%d files, %d uploaded too late)", upstream, len(kept), late)
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, b.String())
}

// upstreamFailed answers for an index that failed: 504 when it did not
// answer in time, else 502.
func (p *Proxy) upstreamFailed(w http.ResponseWriter, ctx context.Context, what string, err error) {
	var ne net.Error
	if ctx.Err() == context.DeadlineExceeded || errors.As(err, &ne) && ne.Timeout() {
		p.fail(w, http.StatusGatewayTimeout, "%s did not answer within %s (timeout)", what, p.timeout)
		return
	}
	p.fail(w, http.StatusBadGateway, "%s: %v", what, err)
}

// fileToken names a file's URL in the gate's paths.
func fileToken(u string) string {
	sum := sha256.Sum256([]byte(u))
	return hex.EncodeToString(sum[:12])
}

// serveFile fetches a file whole, checks its hashes, and serves it.
func (p *Proxy) serveFile(w http.ResponseWriter, r *http.Request, e fileEntry) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// The whole file may take long; what may not is a pause: each read
	// must come within the timeout of the last.
	stalled := false
	var smu sync.Mutex
	timer := time.AfterFunc(p.timeout, func() {
		smu.Lock()
		stalled = true
		smu.Unlock()
		cancel()
	})
	defer timer.Stop()
	failed := func(err error) {
		smu.Lock()
		s := stalled
		smu.Unlock()
		if s {
			p.fail(w, http.StatusGatewayTimeout, "%s (%s) did not answer within %s (timeout)", e.filename, e.url, p.timeout)
			return
		}
		p.fail(w, http.StatusBadGateway, "%s (%s): %v", e.filename, e.url, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url, nil)
	if err != nil {
		failed(err)
		return
	}
	res, err := p.client.Do(req)
	if err != nil {
		failed(err)
		return
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		p.fail(w, http.StatusBadGateway, "%s: the index answered %s for %s", e.filename, res.Status, e.url)
		return
	}
	tmp, err := os.CreateTemp("", "featbench-gate-")
	if err != nil {
		p.fail(w, http.StatusInternalServerError, "%s: %v", e.filename, err)
		return
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	buf := make([]byte, 256<<10)
	var n int64
	for {
		k, rerr := res.Body.Read(buf)
		if k > 0 {
			timer.Reset(p.timeout)
			n += int64(k)
			if n > maxFile {
				p.fail(w, http.StatusBadGateway, "%s: over %d GiB", e.filename, maxFile>>30)
				return
			}
			h.Write(buf[:k])
			if _, err := tmp.Write(buf[:k]); err != nil {
				p.fail(w, http.StatusInternalServerError, "%s: %v", e.filename, err)
				return
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			failed(rerr)
			return
		}
	}
	timer.Stop()
	sum := hex.EncodeToString(h.Sum(nil))
	if e.sha256 != "" && !strings.EqualFold(e.sha256, sum) {
		p.fail(w, http.StatusBadGateway, "%s: the index served a file whose sha256 is %s, where its page says %s", e.filename, sum, e.sha256)
		return
	}
	name, version, ok := pyindex.ParseFilename(e.filename)
	if l, locked := p.lock[name]; ok && locked && l.Version == version && len(l.Hashes) > 0 && !slices.Contains(l.Hashes, "sha256:"+sum) {
		p.fail(w, http.StatusBadGateway, "%s: the index served a file whose sha256 is %s, but the dataset's lock pins %s %s to %s", e.filename, sum, name, version, strings.Join(l.Hashes, ", "))
		return
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		p.fail(w, http.StatusInternalServerError, "%s: %v", e.filename, err)
		return
	}
	p.mu.Lock()
	p.downloads = append(p.downloads, Download{Project: name, Version: version, Filename: e.filename, SHA256: sum, URL: e.url})
	p.mu.Unlock()
	p.logf("200 %s (%d bytes, sha256 %s)", e.url, n, sum)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = io.Copy(w, tmp)
}

// allowed says whether host (host or host:port, with the scheme's port
// when none) may be reached as a proxy.
func (p *Proxy) allowed(host, defPort string) (string, bool) {
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, defPort)
	}
	host = strings.ToLower(host)
	return host, p.forward[host]
}

// refusal names what a build may reach.
func (p *Proxy) refusal(target string) string {
	var may []string
	for f := range p.forward {
		may = append(may, f)
	}
	slices.Sort(may)
	for _, i := range p.o.Indexes {
		may = append(may, "the index "+i+" (at "+IndexURL(slices.Index(p.o.Indexes, i))+")")
	}
	if len(may) == 0 {
		return target + " is not reachable from the build: nothing is"
	}
	return target + " is not reachable from the build; it may reach only " + strings.Join(may, ", ")
}

// serveForward forwards a request for an absolute http:// URL to an
// allowed host.
func (p *Proxy) serveForward(w http.ResponseWriter, r *http.Request) {
	if r.URL.Scheme != "http" {
		p.fail(w, http.StatusForbidden, "%s: only http:// URLs are forwarded (https goes through CONNECT)", r.URL.Redacted())
		return
	}
	host, ok := p.allowed(r.URL.Host, "80")
	if !ok {
		p.fail(w, http.StatusForbidden, "%s", p.refusal(host))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*p.timeout)
	defer cancel()
	out := r.Clone(ctx)
	out.RequestURI = ""
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive", "Te", "Trailer", "Upgrade"} {
		out.Header.Del(h)
	}
	res, err := p.client.Transport.RoundTrip(out)
	if err != nil {
		p.upstreamFailed(w, ctx, r.URL.Redacted(), err)
		return
	}
	defer res.Body.Close()
	for k, vs := range res.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(res.StatusCode)
	n, _ := io.Copy(w, res.Body)
	p.logf("%d %s (%d bytes, forwarded)", res.StatusCode, r.URL.Redacted(), n)
}

// serveConnect tunnels to an allowed host:port.
func (p *Proxy) serveConnect(w http.ResponseWriter, r *http.Request) {
	host, ok := p.allowed(r.Host, "443")
	if !ok {
		p.fail(w, http.StatusForbidden, "CONNECT %s", p.refusal(host))
		return
	}
	up, err := net.DialTimeout("tcp", host, p.timeout)
	if err != nil {
		p.upstreamFailed(w, r.Context(), host, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		p.fail(w, http.StatusInternalServerError, "CONNECT %s: the connection cannot be taken over", host)
		return
	}
	c, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	p.logf("200 CONNECT %s", host)
	_, _ = c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	done := make(chan struct{}, 2)
	go func() {
		if buf.Reader.Buffered() > 0 {
			b, _ := buf.Reader.Peek(buf.Reader.Buffered())
			_, _ = up.Write(b)
		}
		_, _ = io.Copy(up, c)
		done <- struct{}{}
	}()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	<-done
}
