package site

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/featbench/featbench/config"
)

// LoadOptions reads featbench.toml under root (or cfgPath) into build
// options.
func LoadOptions(root, cfgPath string) (Options, error) {
	if cfgPath == "" {
		cfgPath = filepath.Join(root, config.FileName)
	}
	cfg, err := config.LoadRoot(cfgPath, root)
	if err != nil {
		return Options{}, err
	}
	raw, err := os.ReadFile(cfgPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Options{}, fmt.Errorf("reading config: %w", err)
	}
	return Options{Root: root, ConfigPath: cfgPath, Config: cfg.Site, ConfigBytes: raw}, nil
}

// DataDir is the data folder the options name.
func (o Options) DataDir() string { return o.dataDir() }

// Warnings lists what is valid in the configuration but costs the site
// something, for the build to print.
func Warnings(opts Options) []string {
	var ws []string
	if w := baseURLWarning(opts.Config); w != "" {
		ws = append(ws, w)
	}
	return ws
}

func (r Report) String() string {
	if r.UpToDate {
		return fmt.Sprintf("site is up to date in %s (%d files); nothing changed", r.Output, r.Files)
	}
	return fmt.Sprintf("built %d pages (%d rendered, %d files, %d written, %d removed) into %s",
		r.Pages, r.Pages-r.Kept, r.Files, r.Written, r.Removed, r.Output)
}

// Handler serves a built site under its base path, with 404.html for
// missing pages. Paths are matched on a "/" boundary (base /featbench/
// does not serve /featbenchX), and no dotfile is ever served.
func Handler(dir, base string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	prefix := strings.TrimSuffix(base, "/") // "" for the root
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if base != "/" && (r.URL.Path == "/" || r.URL.Path == prefix) {
			http.Redirect(w, r, base, http.StatusFound)
			return
		}
		rel, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || !strings.HasPrefix(rel, "/") || hidden(rel) {
			notFound(w, dir)
			return
		}
		clean := path.Clean(rel)
		if hidden(clean) {
			notFound(w, dir)
			return
		}
		full := filepath.Join(dir, filepath.FromSlash(clean))
		fi, err := os.Stat(full)
		if err == nil && fi.IsDir() {
			_, err = os.Stat(filepath.Join(full, "index.html"))
		}
		if err != nil {
			notFound(w, dir)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = rel
		r2.URL.RawPath = ""
		files.ServeHTTP(w, r2)
	})
}

// hidden reports whether a slash-separated path has a segment starting
// with a dot: a dotfile, or a ".." that path.Clean would resolve.
func hidden(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

func notFound(w http.ResponseWriter, dir string) {
	page, err := os.ReadFile(filepath.Join(dir, "404.html"))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	if err == nil {
		_, _ = w.Write(page)
	}
}

// listenAddr is the address --serve listens on: a missing host means
// this machine only, never every interface; "0.0.0.0:8080" asks for every
// interface explicitly. A bare port is taken as ":PORT".
func listenAddr(addr string) (string, error) {
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("address %q: want HOST:PORT such as localhost:8080: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Serve builds the site, serves it on addr and rebuilds when data/ or
// featbench.toml change. When the templates or the generator's own code
// change it regenerates the templ code, recompiles itself and restarts.
func Serve(ctx context.Context, opts Options, addr string) error {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	la, err := listenAddr(addr)
	if err != nil {
		return err
	}
	// Listen before the first build: a taken port fails at once, and
	// requests during a build see the previous site, whole.
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", la)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	srv := &http.Server{Handler: Handler(opts.outputDir(), opts.Config.BasePath()), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	defer func() {
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()

	build := func() {
		rep, err := Build(ctx, opts)
		if err != nil {
			fmt.Fprintf(opts.Log, "build failed (serving the last good site): %v\n", err)
			return
		}
		fmt.Fprintln(opts.Log, rep)
	}
	build()
	host, _, _ := net.SplitHostPort(la)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	where := "this machine only; --serve 0.0.0.0:" + port + " serves every interface"
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		where = "every interface"
	}
	fmt.Fprintf(opts.Log, "serving on http://%s%s (%s; Ctrl-C to stop)\n", net.JoinHostPort(host, port), opts.Config.BasePath(), where)

	dataSum, codeSum := watchSums(opts)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			return fmt.Errorf("serving: %w", err)
		case <-tick.C:
		}
		d, c := watchSums(opts)
		if c != codeSum {
			fmt.Fprintln(opts.Log, "templates or generator code changed: recompiling")
			if err := restart(ctx, opts, srv); err != nil {
				fmt.Fprintf(opts.Log, "cannot restart: %v\n", err)
				codeSum = c
			}
			continue
		}
		if d != dataSum {
			dataSum = d
			if n, err := LoadOptions(opts.Root, opts.ConfigPath); err == nil {
				n.Log, n.RequireLocalCharts, n.CacheDir, n.StateDir = opts.Log, opts.RequireLocalCharts, opts.CacheDir, opts.StateDir
				opts = n
			} else {
				fmt.Fprintf(opts.Log, "config: %v\n", err)
			}
			fmt.Fprintln(opts.Log, "data or config changed: rebuilding")
			build()
		}
	}
}

// watchSums fingerprints what --serve watches: data and config, and the
// code that renders them.
func watchSums(opts Options) (data, code string) {
	sum := func(roots []string, keep func(string) bool) string {
		h := sha256.New()
		for _, r := range roots {
			_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || !keep(p) {
					return nil
				}
				if fi, err := d.Info(); err == nil {
					fmt.Fprintf(h, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
				}
				return nil
			})
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	all := func(string) bool { return true }
	cfgPath := opts.ConfigPath
	if cfgPath == "" {
		cfgPath = filepath.Join(opts.Root, config.FileName)
	}
	data = sum([]string{opts.dataDir(), cfgPath}, all)
	code = sum([]string{filepath.Join(opts.Root, "templates"), filepath.Join(opts.Root, "site")}, func(p string) bool {
		return strings.HasSuffix(p, ".templ") || (strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_templ.go")) ||
			strings.HasSuffix(p, ".css") || strings.HasSuffix(p, ".js")
	})
	return data, code
}

// restart regenerates templ code, builds a new binary and replaces this
// process with it, keeping the arguments.
func restart(ctx context.Context, opts Options, srv *http.Server) error {
	gen := exec.CommandContext(ctx, "go", "tool", "templ", "generate")
	gen.Dir = opts.Root
	if out, err := gen.CombinedOutput(); err != nil {
		return fmt.Errorf("templ generate: %w: %s", err, out)
	}
	bin := filepath.Join(os.TempDir(), fmt.Sprintf("featbench-build-%d", os.Getpid()))
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/build")
	build.Dir = opts.Root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w: %s", err, out)
	}
	shut, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	return syscall.Exec(bin, os.Args, os.Environ())
}
