package evaluate_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/evaluate"
)

// fakeRun writes a run folder by hand: two instances, one attempt each,
// with a report, a prediction, a log and test outputs, and its manifest.
func fakeRun(t *testing.T) (string, evaluate.Meta) {
	t.Helper()
	dir := t.TempDir()
	meta := evaluate.Meta{RunID: "r", Dataset: "example/v2", Split: "lite", Attempts: 1,
		Predictions: "/x/preds.jsonl sha256:" + strings.Repeat("ab", 32), Instances: []string{"a-1", "b-2", "c-3"}}
	for _, id := range meta.Instances[:2] {
		adir := filepath.Join(dir, id, "attempt-1")
		if err := os.MkdirAll(filepath.Join(adir, evaluate.TestsDir), 0o755); err != nil {
			t.Fatal(err)
		}
		rep, _ := json.Marshal(evaluate.Report{InstanceID: id, Attempt: 1, Level: 1, Flow: "repo"})
		for name, data := range map[string]string{
			evaluate.ReportFile: string(rep), evaluate.PredFile: "diff of " + id, evaluate.LogFile: "log of " + id,
			"tests/01-all.stdout": "out", "tests/01-all.xml": "<xml/>",
		} {
			if err := os.WriteFile(filepath.Join(adir, filepath.FromSlash(name)), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := evaluate.WriteManifest(dir, meta); err != nil {
		t.Fatal(err)
	}
	return dir, meta
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPackAndUnpackLogs: what PackLogs writes, UnpackLogs reads back whole,
// with the manifest, and every file's hash is the manifest's.
func TestPackAndUnpackLogs(t *testing.T) {
	dir, meta := fakeRun(t)
	man, err := evaluate.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if man.Predictions != "sha256:"+strings.Repeat("ab", 32) || len(man.Files) != 10 {
		t.Fatalf("manifest: predictions %q, %d files; want the file's digest and 5 files of each of 2 attempts", man.Predictions, len(man.Files))
	}
	raw, err := evaluate.PackLogs(dir, meta.Instances, 1, man)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := evaluate.PackLogs(dir, meta.Instances, 1, man)
	if !bytes.Equal(raw, again) {
		t.Error("packing twice gave different bytes")
	}
	path := writeFile(t, filepath.Join(t.TempDir(), "logs.tar.gz"), raw)
	logs, err := evaluate.UnpackLogs(context.Background(), path, evaluate.DefaultLogLimits())
	if err != nil {
		t.Fatal(err)
	}
	if logs.Manifest == nil || logs.Manifest.Predictions != man.Predictions {
		t.Fatalf("the archive's manifest is %+v", logs.Manifest)
	}
	for name, sum := range man.Files {
		if logs.Sums[name] != sum {
			t.Errorf("%s: unpacked sha256 %q, manifest %q", name, logs.Sums[name], sum)
		}
	}
	al := logs.Attempts["b-2"][1]
	if al == nil || al.Report == nil || al.Report.InstanceID != "b-2" || string(al.Prediction) != "diff of b-2" || string(al.Files["01-all.xml"]) != "<xml/>" {
		t.Fatalf("attempt b-2/1 unpacked as %+v", al)
	}
	// A smaller split's manifest lists its own instances only.
	if only := man.Only([]string{"a-1"}); len(only.Files) != 5 {
		t.Errorf("Only(a-1) keeps %d files, want 5", len(only.Files))
	}

	// A file edited after the run is not packed.
	writeFile(t, filepath.Join(dir, "a-1", "attempt-1", "tests", "01-all.stdout"), []byte("1 passed"))
	if _, err := evaluate.PackLogs(dir, meta.Instances, 1, man); err == nil || !strings.Contains(err.Error(), filepath.Join("a-1", "attempt-1", "tests", "01-all.stdout")) {
		t.Errorf("packing an edited log: %v; want an error naming the file", err)
	}
	// Neither is one added after it.
	writeFile(t, filepath.Join(dir, "a-1", "attempt-1", "tests", "01-all.stdout"), []byte("out"))
	writeFile(t, filepath.Join(dir, "b-2", "attempt-1", "tests", "02-x.stdout"), []byte("new"))
	if _, err := evaluate.PackLogs(dir, meta.Instances, 1, man); err == nil || !strings.Contains(err.Error(), "02-x.stdout") {
		t.Errorf("packing a log added after the run: %v; want an error naming it", err)
	}
}

// tarEntry is one file of a hand-made archive.
type tarEntry struct {
	name string
	typ  byte
	data string
}

func gzipTar(t testing.TB, entries []tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o644, Size: int64(len(e.data))}
		if typ != tar.TypeReg {
			hdr.Size = 0
			hdr.Linkname = "/etc/passwd"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestUnpackLogsRefuses: whatever is not an attempt's file, or a manifest,
// is refused with the entry's name.
func TestUnpackLogsRefuses(t *testing.T) {
	lim := evaluate.DefaultLogLimits()
	for _, c := range []struct {
		name    string
		entries []tarEntry
		lim     func(*evaluate.LogLimits)
		want    string
	}{
		{"outside", []tarEntry{{name: "../x/attempt-1/report.json", data: "{}"}}, nil, `unexpected entry "../x/attempt-1/report.json"`},
		{"no attempt", []tarEntry{{name: "a-1/report.json", data: "{}"}}, nil, "unexpected entry"},
		{"attempt 0", []tarEntry{{name: "a-1/attempt-0/report.json", data: "{}"}}, nil, "unexpected entry"},
		{"attempt 01", []tarEntry{{name: "a-1/attempt-01/report.json", data: "{}"}}, nil, "unexpected entry"},
		{"unknown file", []tarEntry{{name: "a-1/attempt-1/run.sh", data: "x"}}, nil, `unexpected entry "a-1/attempt-1/run.sh"`},
		{"deep tests", []tarEntry{{name: "a-1/attempt-1/tests/x/y", data: "x"}}, nil, "unexpected entry"},
		{"symlink", []tarEntry{{name: "a-1/attempt-1/report.json", typ: tar.TypeSymlink}}, nil, "not a regular file"},
		{"twice", []tarEntry{{name: "a-1/attempt-1/prediction.diff", data: "x"}, {name: "a-1/attempt-1/prediction.diff", data: "y"}}, nil, "twice"},
		{"bad report", []tarEntry{{name: "a-1/attempt-1/report.json", data: "{"}}, nil, "a-1/attempt-1/report.json"},
		{"bad manifest", []tarEntry{{name: "manifest.json", data: `{"schema": 1, "extra": 2}`}}, nil, "manifest.json"},
		{"entries", []tarEntry{{name: "a-1/attempt-1/tests/1", data: "x"}, {name: "a-1/attempt-1/tests/2", data: "x"}, {name: "a-1/attempt-1/tests/3", data: "x"}},
			func(l *evaluate.LogLimits) { l.Entries = 2 }, "more than 2 entries"},
		{"file", []tarEntry{{name: "a-1/attempt-1/container.log", data: "12345"}}, func(l *evaluate.LogLimits) { l.File = 4 }, "a-1/attempt-1/container.log is 5 bytes unpacked"},
		{"total", []tarEntry{{name: "a-1/attempt-1/tests/1", data: "123"}, {name: "a-1/attempt-1/tests/2", data: "123"}},
			func(l *evaluate.LogLimits) { l.Total = 5 }, "more than 5 bytes unpacked"},
		{"compressed", []tarEntry{{name: "a-1/attempt-1/tests/1", data: strings.Repeat("x", 1000)}},
			func(l *evaluate.LogLimits) { l.Compressed = 20 }, "larger than 20 bytes compressed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := lim
			if c.lim != nil {
				c.lim(&l)
			}
			path := writeFile(t, filepath.Join(t.TempDir(), "logs.tar.gz"), gzipTar(t, c.entries))
			_, err := evaluate.UnpackLogs(context.Background(), path, l)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v; want one naming %s and %q", err, path, c.want)
			}
		})
	}
	// Not gzip; a symbolic link to an archive.
	dir := t.TempDir()
	if _, err := evaluate.UnpackLogs(context.Background(), writeFile(t, filepath.Join(dir, "plain"), []byte("plain text")), lim); err == nil || !strings.Contains(err.Error(), "not a gzip file") {
		t.Errorf("plain text: %v", err)
	}
	good := writeFile(t, filepath.Join(dir, "good.tar.gz"), gzipTar(t, []tarEntry{{name: "a-1/attempt-1/prediction.diff", data: "x"}}))
	if _, err := evaluate.UnpackLogs(context.Background(), good, lim); err != nil {
		t.Fatalf("a good archive: %v", err)
	}
	link := filepath.Join(dir, "link.tar.gz")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	if _, err := evaluate.UnpackLogs(context.Background(), link, lim); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a symbolic link: %v; want it refused", err)
	}
}

// bomb writes a gzip bomb: a tar of files of zeros, each of size bytes,
// count of them, under names made by name. It is made of concatenated gzip
// members (which gzip readers read as one stream), the member of zeros
// compressed once, so a 1 GiB bomb costs a fraction of a second to make
// and about a megabyte on disk.
func bomb(t testing.TB, count int, size int64, name func(int) string) string {
	t.Helper()
	member := func(data []byte) []byte {
		var b bytes.Buffer
		gz, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		gz.Write(data)
		gz.Close()
		return b.Bytes()
	}
	const chunk = 64 << 20
	if size%chunk != 0 {
		t.Fatalf("bomb: size %d is not a multiple of %d", size, chunk)
	}
	zeros := member(make([]byte, chunk))
	var out bytes.Buffer
	for i := range count {
		var hdr bytes.Buffer
		tw := tar.NewWriter(&hdr)
		if err := tw.WriteHeader(&tar.Header{Name: name(i), Typeflag: tar.TypeReg, Mode: 0o644, Size: size, Format: tar.FormatGNU}); err != nil {
			t.Fatal(err)
		}
		out.Write(member(hdr.Bytes()))
		for range size / chunk {
			out.Write(zeros)
		}
	}
	out.Write(member(make([]byte, 1024))) // the end of the archive
	path := filepath.Join(t.TempDir(), "bomb.tar.gz")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// allocated runs f and returns the bytes it allocated on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLogsBomb: a logs.tar.gz of about a megabyte that expands to 1 GiB is
// refused, having expanded no more than the limits allow, and holding no
// more of it in memory than the limits allow. How long that takes is
// BenchmarkLogsBomb's.
func TestLogsBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("expands half a gigabyte")
	}
	ctx := context.Background()
	lim := evaluate.DefaultLogLimits()
	// One 1 GiB file: refused by its header, nothing expanded.
	one := bomb(t, 1, 1<<30, func(int) string { return "a-1/attempt-1/container.log" })
	if st, _ := os.Stat(one); st.Size() > 2<<20 {
		t.Fatalf("the bomb is %d bytes; it was meant to be about 1 MB", st.Size())
	}
	var err error
	n := allocated(func() { _, err = evaluate.UnpackLogs(ctx, one, lim) })
	if err == nil || !strings.Contains(err.Error(), "a-1/attempt-1/container.log is 1073741824 bytes unpacked, over the limit") {
		t.Errorf("one 1 GiB file: %v; want it refused for its size", err)
	}
	if n > 4<<20 {
		t.Errorf("refusing one 1 GiB file allocated %d bytes; want under 4 MiB", n)
	}
	// Sixteen 64 MiB logs: read and hashed up to the total, then refused;
	// logs are hashed as they stream, never held.
	many := bomb(t, 16, 64<<20, func(i int) string { return "a-" + string(rune('a'+i)) + "/attempt-1/container.log" })
	n = allocated(func() { _, err = evaluate.UnpackLogs(ctx, many, lim) })
	if err == nil || !strings.Contains(err.Error(), "more than 536870912 bytes unpacked") {
		t.Errorf("sixteen 64 MiB logs: %v; want them refused over the total", err)
	}
	if n > 8<<20 {
		t.Errorf("refusing 1 GiB of logs allocated %d bytes; want under 8 MiB", n)
	}
	// Test outputs are kept (they are regraded): memory grows with what is
	// read, up to the total and no further.
	small := lim
	small.Total = 64 << 20
	outs := bomb(t, 16, 64<<20, func(i int) string { return "a-1/attempt-1/tests/" + string(rune('a'+i)) + ".stdout" })
	n = allocated(func() { _, err = evaluate.UnpackLogs(ctx, outs, small) })
	if err == nil || !strings.Contains(err.Error(), "more than 67108864 bytes unpacked") {
		t.Errorf("sixteen 64 MiB test outputs: %v; want them refused over a total of 64 MiB", err)
	}
	if n > 64<<20+8<<20 {
		t.Errorf("refusing 1 GiB of test outputs with a 64 MiB total allocated %d bytes; want at most the total and 8 MiB", n)
	}
}

// BenchmarkLogsBomb times refusing a 1 GiB bomb of logs with the default
// limits: it expands and hashes 512 MiB before it is refused.
//
//	go test ./internal/evaluate -run '^$' -bench LogsBomb -benchtime 5x
func BenchmarkLogsBomb(b *testing.B) {
	path := bomb(b, 16, 64<<20, func(i int) string { return "a-" + string(rune('a'+i)) + "/attempt-1/container.log" })
	lim := evaluate.DefaultLogLimits()
	b.ResetTimer()
	for range b.N {
		if _, err := evaluate.UnpackLogs(context.Background(), path, lim); err == nil {
			b.Fatal("the bomb was accepted")
		}
	}
}
