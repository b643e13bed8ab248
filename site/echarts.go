package site

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// The ECharts library comes from the npm registry, pinned by package.json
// and package-lock.json, installed into a cache and copied into the site.
// It is never committed. Without npm the pages load the same file from a
// CDN, checked by its subresource-integrity hash.

// echartsSRI pins the sha384 of dist/echarts.min.js per version, so the
// CDN fallback loads exactly the file npm would install. An npm install
// whose file does not match is refused: the pin must follow the lockfile.
var echartsSRI = map[string]string{
	"5.6.0": "sha384-pPi0zxBAoDu6+JXW/C68UZLvBUUtU+7zonhif43rqj7pxsGyqyqzcian2Rj37Rss",
}

const echartsDist = "dist/echarts.min.js"

// chartLib is the chart library the site uses: a local copy (data set) or
// the pinned CDN copy.
type chartLib struct {
	version string
	file    string // local file, empty for the CDN copy
	data    []byte
}

// url is where pages load the library from.
func (l *chartLib) url(base string) string {
	if l.data != nil {
		return base + "assets/echarts.min.js"
	}
	return "https://cdn.jsdelivr.net/npm/echarts@" + l.version + "/" + echartsDist
}

// sri is the integrity attribute for the CDN copy; a local copy needs none.
func (l *chartLib) sri() string {
	if l.data != nil {
		return ""
	}
	return echartsSRI[l.version]
}

// chartLibrary installs the pinned ECharts into the cache when missing and
// returns it, or falls back to the CDN copy where npm is not available.
func chartLibrary(ctx context.Context, opts Options, logw io.Writer) (*chartLib, error) {
	lockPath := filepath.Join(opts.Root, "package-lock.json")
	lock, err := os.ReadFile(lockPath)
	if err != nil {
		return nil, fmt.Errorf("reading the chart library pin: %w", err)
	}
	var parsed struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(lock, &parsed); err != nil {
		return nil, fmt.Errorf("%s: %w", lockPath, err)
	}
	version := parsed.Packages["node_modules/echarts"].Version
	if version == "" {
		return nil, fmt.Errorf("%s: no node_modules/echarts entry: run npm install echarts --save-exact", lockPath)
	}
	lib := &chartLib{version: version}

	dir := npmDir(opts, lock)
	file := filepath.Join(dir, "node_modules", "echarts", filepath.FromSlash(echartsDist))
	if _, err := os.Stat(file); err != nil {
		if err := npmInstall(ctx, opts.Root, dir, logw); err != nil {
			if opts.RequireLocalCharts {
				return nil, fmt.Errorf("installing the chart library with npm (required for an offline site): %w", err)
			}
			if echartsSRI[version] == "" {
				return nil, fmt.Errorf("npm is not available (%v) and there is no pinned CDN hash for echarts %s", err, version)
			}
			fmt.Fprintf(logw, "npm is not available (%v): the site loads echarts %s from the CDN, checked by its SRI hash\n", err, version)
			return lib, nil
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the chart library: %w", err)
	}
	d := sha512.Sum384(data)
	got := "sha384-" + base64.StdEncoding.EncodeToString(d[:])
	if want := echartsSRI[version]; want != "" && got != want {
		return nil, fmt.Errorf("%s has hash %s but echartsSRI pins %s for echarts %s: update the pin in site/echarts.go with the lockfile", file, got, want, version)
	}
	lib.file, lib.data = file, data
	return lib, nil
}

// npmDir is where the lockfile's packages are installed: a folder of the
// cache named by the lockfile's hash (scripts/provision-browser.sh makes
// the same), so that a new lockfile installs afresh.
func npmDir(opts Options, lock []byte) string {
	cache := opts.CacheDir
	if cache == "" {
		cache = filepath.Join(opts.Root, ".cache", "npm")
	}
	sum := sha256.Sum256(lock)
	return filepath.Join(cache, hex.EncodeToString(sum[:8]))
}

// NPMFile returns the path of rel (such as "axe-core/axe.min.js") among
// the project's npm packages, installed from package-lock.json with `npm
// ci` when missing, where the chart library is: the browser tests find
// axe-core so.
func NPMFile(ctx context.Context, opts Options, rel string, logw io.Writer) (string, error) {
	lock, err := os.ReadFile(filepath.Join(opts.Root, "package-lock.json"))
	if err != nil {
		return "", err
	}
	dir := npmDir(opts, lock)
	file := filepath.Join(dir, "node_modules", filepath.FromSlash(rel))
	if _, err := os.Stat(file); err != nil {
		if err := npmInstall(ctx, opts.Root, dir, logw); err != nil {
			return "", err
		}
		if _, err := os.Stat(file); err != nil {
			return "", fmt.Errorf("%s is not among the packages package-lock.json installs: %w", rel, err)
		}
	}
	return file, nil
}

// npmInstall runs `npm ci` for the project's package.json and lockfile in
// a cache folder, so the project tree stays free of node_modules.
func npmInstall(ctx context.Context, root, dir string, logw io.Writer) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return errors.New("npm not found in PATH")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return err
		}
		if err := writeAtomic(filepath.Join(dir, f), raw); err != nil {
			return err
		}
	}
	fmt.Fprintf(logw, "installing the chart library with npm into %s\n", dir)
	cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm ci: %w: %s", err, out)
	}
	return nil
}
