package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/featbench/featbench/internal/tomlstrict"
)

// Attestation is one entry of data/checked.toml: a maintainer re-ran a
// submission and vouches for its files as they were then. SHA256 is
// SubmissionHash of the folder, so any later change to its files (a pull
// request editing a checked submission) no longer matches, and the check
// fails until a maintainer re-checks the submission or removes the entry.
//
//	[[checked]]
//	submission = "example/v2/full/20261123_gold"  # Submission.ID()
//	sha256 = "…"                                  # SubmissionHash
//	by = "FeatBench maintainers"
//	date = 2026-11-23
//	note = "Re-ran with examples/evaluate.sh."
type Attestation struct {
	Submission string    `toml:"submission"`
	SHA256     string    `toml:"sha256"`
	By         string    `toml:"by"`
	Date       time.Time `toml:"date"`
	Note       string    `toml:"note"`
}

type checkedDoc struct {
	Checked []Attestation `toml:"checked"`
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// loadChecked reads data/checked.toml and marks the submissions whose
// attestation matches their files. subs are the submissions that loaded;
// t.submissions lists every submission folder.
func loadChecked(t *tree, subs []*Submission) Problems {
	if t.checked == nil {
		return nil // also when it is not a regular file: that problem is listed
	}
	path := t.checked.path
	raw, err := readFile(path, maxCheckedFile, nil)
	if err != nil {
		return Problems{readProblem(path, err)}
	}
	var doc checkedDoc
	kl, ps := decodeTOML(path, raw, &doc, nil)
	if len(ps) > 0 {
		return ps
	}
	if len(doc.Checked) > maxAttestations {
		kl.Add(&ps, path, "checked", "holds %d attestations; at most %d", len(doc.Checked), maxAttestations)
		return ps
	}
	folders := map[string]*folder{}
	for _, f := range t.submissions {
		folders[strings.TrimPrefix(f.rel, "submissions/")] = f
	}
	loaded := map[string]*Submission{}
	for _, s := range subs {
		loaded[s.ID()] = s
	}
	first := map[string]string{}
	for i := range doc.Checked {
		a := &doc.Checked[i]
		field := fmt.Sprintf("checked[%d]", i)
		bad := func(f, format string, args ...any) { kl.Add(&ps, path, field+f, format, args...) }
		n := len(ps)
		if msg := checkText(a.By, maxAttestedBy, oneLine); msg != "" {
			bad(".by", "%s", msg)
		} else if strings.TrimSpace(a.By) == "" {
			bad(".by", "is required: who checked the submission")
		}
		if a.Date.IsZero() {
			bad(".date", "is required (a date such as 2026-11-23)")
		}
		if msg := checkText(a.Note, maxAttestNote, multiLine); msg != "" {
			bad(".note", "%s", msg)
		}
		if !sha256Hex.MatchString(a.SHA256) {
			bad(".sha256", "is %s; want the 64 lowercase hexadecimal digits `go run ./cmd/build --attest %s` prints", tomlstrict.Quote(a.SHA256), a.Submission)
		}
		switch {
		case checkSubmissionID(a.Submission) != nil:
			bad(".submission", "is %s; want name/version/split/folder, e.g. \"example/v2/full/20261123_gold\"", tomlstrict.Quote(a.Submission))
			continue
		case first[a.Submission] != "":
			bad(".submission", "attests %s again (see %s)", a.Submission, first[a.Submission])
			continue
		case folders[a.Submission] == nil:
			bad(".submission", "names no submission: there is no folder data/submissions/%s/", a.Submission)
			continue
		}
		first[a.Submission] = field
		f := folders[a.Submission]
		if f.bad || len(ps) > n {
			continue // the problems are listed
		}
		// The folder is hashed even when the submission has problems of
		// its own, so that a changed checked submission always says so.
		var files []SubmissionFile
		for _, name := range f.names {
			e := f.files[name]
			files = append(files, SubmissionFile{Name: name, Path: e.path, Size: e.size})
		}
		sum, err := hashFiles(files)
		if err != nil {
			bad(".sha256", "cannot hash the files of %s: %v", a.Submission, err)
			continue
		}
		if sum != a.SHA256 {
			bad(".sha256", "no longer matches the files of %s (their hash is now %s): they changed since a maintainer checked them; a maintainer must re-check the submission and update the attestation, or remove it", a.Submission, sum)
			continue
		}
		if s := loaded[a.Submission]; s != nil {
			s.Attestation = a
			s.Checked = true
		}
	}
	return ps
}

// checkSubmissionID reports why id is not a submission's ID, or nil.
func checkSubmissionID(id string) error {
	parts := strings.Split(id, "/")
	if len(parts) != 4 {
		return fmt.Errorf("%s is not name/version/split/folder", tomlstrict.Quote(id))
	}
	for _, p := range parts {
		if err := CheckName(p); err != nil {
			return err
		}
	}
	return nil
}

// SubmissionHash is the SHA-256 an attestation records for a submission:
// the folder data/submissions/<id>/ under the data root, id being
// "name/version/split/folder" (Submission.ID). It covers every file of the
// folder, names and contents: it is the SHA-256 of the lines
// "<SHA-256 of the file>  <name>\n" of the files sorted by name, which is
// what `sha256sum $(LC_ALL=C ls) | sha256sum` prints inside the folder.
// As loading does, it refuses symbolic links and anything but regular
// files in the folder.
func SubmissionHash(root, id string) (string, error) {
	if err := checkSubmissionID(id); err != nil {
		return "", fmt.Errorf("submission %v", err)
	}
	if err := checkFolder(root); err != nil {
		return "", err
	}
	dir := root
	for _, p := range append([]string{"submissions"}, strings.Split(id, "/")...) {
		dir = filepath.Join(dir, p)
		if err := checkFolder(dir); err != nil {
			return "", err
		}
	}
	list, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var files []SubmissionFile
	for _, d := range list {
		if !d.Type().IsRegular() {
			return "", fmt.Errorf("%s is %s: %s", filepath.Join(dir, d.Name()), modeName(d.Type()), notRegular)
		}
		files = append(files, SubmissionFile{Name: d.Name(), Path: filepath.Join(dir, d.Name())})
	}
	return hashFiles(files)
}

// checkFolder checks that path is a folder and not a symbolic link.
func checkFolder(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		what := "not a folder"
		if fi.Mode()&fs.ModeType != 0 {
			what = modeName(fi.Mode())
		}
		return fmt.Errorf("%s is %s: %s", path, what, notRegular)
	}
	return nil
}

// hashFiles hashes files as SubmissionHash describes.
func hashFiles(files []SubmissionFile) (string, error) {
	files = append([]SubmissionFile(nil), files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	all := sha256.New()
	for _, f := range files {
		if f.Size > maxHashed { // as the walk saw it: not worth reading
			return "", fmt.Errorf("%s: %w", f.Path, &tooLarge{f.Size, maxHashed})
		}
		sum, err := hashFile(f.Path)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(all, "%s  %s\n", sum, f.Name)
	}
	return hex.EncodeToString(all.Sum(nil)), nil
}

// maxHashed bounds what hashing reads of one file: the largest file a
// submission folder may hold.
const maxHashed = maxResultsFile

func hashFile(path string) (string, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxHashed+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if n > maxHashed {
		return "", fmt.Errorf("%s: %w", path, &tooLarge{-1, maxHashed})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// TOML renders the attestation as the block a maintainer adds to
// data/checked.toml.
func (a Attestation) TOML() string {
	var b strings.Builder
	b.WriteString("[[checked]]\n")
	fmt.Fprintf(&b, "submission = %s\n", tomlString(a.Submission))
	fmt.Fprintf(&b, "sha256 = %s\n", tomlString(a.SHA256))
	fmt.Fprintf(&b, "by = %s\n", tomlString(a.By))
	if !a.Date.IsZero() {
		fmt.Fprintf(&b, "date = %s\n", a.Date.Format(time.DateOnly))
	}
	if a.Note != "" {
		fmt.Fprintf(&b, "note = %s\n", tomlString(a.Note))
	}
	return b.String()
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
