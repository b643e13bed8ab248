package site

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
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
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return Options{}, err
	}
	raw, err := os.ReadFile(cfgPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Options{}, fmt.Errorf("reading config: %w", err)
	}
	return Options{Root: root, Config: cfg.Site, ConfigBytes: raw}, nil
}

func (r Report) String() string {
	if r.UpToDate {
		return fmt.Sprintf("site is up to date in %s (%d files); nothing changed", r.Output, r.Files)
	}
	return fmt.Sprintf("built %d pages (%d files, %d written, %d removed) into %s\nopen %s",
		r.Pages, r.Files, r.Written, r.Removed, r.Output, filepath.Join(r.Output, "index.html"))
}

// Handler serves a built site under its base path, with 404.html for
// missing pages.
func Handler(dir, base string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	prefix := strings.TrimSuffix(base, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if base != "/" && r.URL.Path == "/" {
			http.Redirect(w, r, base, http.StatusFound)
			return
		}
		rel, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok {
			notFound(w, dir)
			return
		}
		clean := path.Clean("/" + rel)
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
		if r2.URL.Path == "" {
			r2.URL.Path = "/"
		}
		files.ServeHTTP(w, r2)
	})
}

func notFound(w http.ResponseWriter, dir string) {
	page, err := os.ReadFile(filepath.Join(dir, "404.html"))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	if err == nil {
		_, _ = w.Write(page)
	}
}

// Serve builds the site, serves it on addr and rebuilds when data/ or
// featbench.toml change. When the templates or the generator's own code
// change it regenerates the templ code, recompiles itself and restarts.
func Serve(ctx context.Context, opts Options, addr string) error {
	build := func() {
		rep, err := Build(ctx, opts)
		if err != nil {
			fmt.Fprintf(opts.Log, "build failed (serving the last good site): %v\n", err)
			return
		}
		fmt.Fprintln(opts.Log, rep)
	}
	build()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	srv := &http.Server{Handler: Handler(opts.outputDir(), opts.Config.BasePath()), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(opts.Log, "serving on http://%s%s (Ctrl-C to stop)\n", ln.Addr(), opts.Config.BasePath())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	dataSum, codeSum := watchSums(opts)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return srv.Shutdown(shut)
		case err := <-errc:
			return err
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
			if n, err := LoadOptions(opts.Root, ""); err == nil {
				n.Log, n.RequireLocalCharts, n.CacheDir = opts.Log, opts.RequireLocalCharts, opts.CacheDir
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
	data = sum([]string{opts.dataDir(), filepath.Join(opts.Root, config.FileName)}, all)
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
