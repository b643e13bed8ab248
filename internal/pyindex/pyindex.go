// Package pyindex speaks the simple repository API of Python package
// indexes: PEP 503's HTML project pages and PEP 691's JSON form of them,
// with PEP 700's upload times and sizes. It reads a project page an index
// served (Parse), writes one in either form (Write), and serves a folder of
// wheels and source archives as an index (Folder), which is how the
// project's tests and a user without internet access get an index.
package pyindex

import (
	"fmt"
	"mime"
	"os"
	"regexp"
	"strings"
	"time"
)

// The media types of PEP 691. An index that knows only PEP 503 answers
// text/html.
const (
	JSONType = "application/vnd.pypi.simple.v1+json"
	HTMLType = "application/vnd.pypi.simple.v1+html"
	// Accept is what a client that reads both forms asks for: JSON first,
	// as pip does.
	Accept = JSONType + ", " + HTMLType + ";q=0.1, text/html;q=0.01"
	// apiVersion is the API version pages written here declare: 1.1 has
	// upload-time and size (PEP 700).
	apiVersion = "1.1"
)

// Page is one project's page: its files.
type Page struct {
	Name  string // as the index gives it (JSON); the normalized name for HTML
	Files []File
}

// File is one distribution file of a project.
type File struct {
	Filename string
	// URL is where the file is, as the page gives it: absolute, or
	// relative to the page (Parse resolves it against the page's URL).
	URL string
	// Hashes are hex digests by algorithm ("sha256"), as the page gives
	// them (an HTML page has at most one, in the URL's fragment).
	Hashes map[string]string
	// RequiresPython is the file's Requires-Python ("" for none).
	RequiresPython string
	// Yanked says the file was yanked (PEP 592), YankedReason why.
	Yanked       bool
	YankedReason string
	// UploadTime is when the file was uploaded (PEP 700); zero when the
	// index does not say (an HTML page never does).
	UploadTime time.Time
	// Size is the file's size in bytes; -1 when the index does not say.
	Size int64
}

// Normalize is PEP 503's normalized form of a project name: runs of -, _
// and . become one -, in lower case.
func Normalize(name string) string {
	return strings.ToLower(separators.ReplaceAllString(name, "-"))
}

var separators = regexp.MustCompile(`[-_.]+`)

// validName matches a project name PEP 508 allows.
var validName = regexp.MustCompile(`^(?i:[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$`)

// ValidName says whether name is a project name PEP 508 allows.
func ValidName(name string) bool { return validName.MatchString(name) }

// ParseFilename reads a wheel's or source archive's file name into the
// project's normalized name and the version. A wheel is
// {name}-{version}(-{build})?-{python}-{abi}-{platform}.whl, its name with
// _ for -; a source archive is {name}-{version}.tar.gz (or .zip), whose
// name may hold - (older archives), so the version is after the last -.
func ParseFilename(filename string) (name, version string, ok bool) {
	switch {
	case strings.HasSuffix(filename, ".whl"):
		parts := strings.Split(strings.TrimSuffix(filename, ".whl"), "-")
		if len(parts) != 5 && len(parts) != 6 {
			return "", "", false
		}
		name, version = parts[0], parts[1]
	case strings.HasSuffix(filename, ".tar.gz"), strings.HasSuffix(filename, ".zip"):
		stem := strings.TrimSuffix(strings.TrimSuffix(filename, ".tar.gz"), ".zip")
		i := strings.LastIndexByte(stem, '-')
		if i <= 0 {
			return "", "", false
		}
		name, version = stem[:i], stem[i+1:]
	default:
		return "", "", false
	}
	if !ValidName(name) || version == "" || strings.ContainsAny(version, "/\\ ") {
		return "", "", false
	}
	return Normalize(name), version, true
}

// WantsJSON says whether a request's Accept header (or its format query
// parameter, which PEP 691 allows instead) prefers the JSON form: JSON is
// served when the client names it with a quality at least that of any
// HTML type it names.
func WantsJSON(accept, format string) bool {
	if format != "" {
		return format == JSONType
	}
	jq, hq := -1.0, -1.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if _, err := fmt.Sscanf(v, "%g", &q); err != nil {
				q = 0
			}
		}
		switch mt {
		case JSONType:
			jq = max(jq, q)
		case HTMLType, "text/html", "*/*":
			hq = max(hq, q)
		}
	}
	return jq > 0 && jq >= hq
}

// PyPI is pip's default index.
const PyPI = "https://pypi.org/simple/"

// PipIndexes returns the indexes pip on this machine is configured with,
// as pip reads them: PIP_INDEX_URL and PIP_EXTRA_INDEX_URL, else
// index-url and extra-index-url of the [global] or [install] section of
// its configuration files (the site-wide ones, then the user's under
// home, then PIP_CONFIG_FILE, the later winning), else PyPI. from says
// where they came from, for the log.
func PipIndexes(getenv func(string) string, home string) (index string, extra []string, from string) {
	index, from = PyPI, "pip's default"
	files := []string{"/etc/xdg/pip/pip.conf", "/etc/pip.conf"}
	if home != "" {
		files = append(files, home+"/.pip/pip.conf", home+"/.config/pip/pip.conf")
	}
	if f := getenv("PIP_CONFIG_FILE"); f != "" && f != os.DevNull {
		files = append(files, f)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		i, e := readPipConf(string(data))
		if i != "" {
			index, from = i, f
		}
		if e != nil {
			extra, from = e, f
		}
	}
	if v := getenv("PIP_INDEX_URL"); v != "" {
		index, from = v, "PIP_INDEX_URL"
	}
	if v := getenv("PIP_EXTRA_INDEX_URL"); v != "" {
		extra, from = strings.Fields(v), "PIP_EXTRA_INDEX_URL"
	}
	return index, extra, from
}

// readPipConf reads index-url and extra-index-url (which may continue on
// indented lines) of the [global] and [install] sections of a pip.conf.
func readPipConf(text string) (index string, extra []string) {
	section, key := "", ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, ";"):
			continue
		case strings.HasPrefix(trimmed, "[") && strings.HasSuffix(trimmed, "]"):
			section, key = strings.ToLower(strings.Trim(trimmed, "[]")), ""
			continue
		case line[0] == ' ' || line[0] == '\t':
			if key == "extra-index-url" && (section == "global" || section == "install") {
				extra = append(extra, strings.Fields(trimmed)...)
			}
			continue
		}
		k, v, ok := strings.Cut(trimmed, "=")
		if !ok {
			k, v, ok = strings.Cut(trimmed, ":")
		}
		if !ok {
			continue
		}
		key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), "_", "-")
		v = strings.TrimSpace(v)
		if section != "global" && section != "install" {
			continue
		}
		switch key {
		case "index-url":
			index = v
		case "extra-index-url":
			extra = strings.Fields(v)
		}
	}
	return index, extra
}
