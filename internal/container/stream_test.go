package container_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
)

// TestExecStream: a command's standard input and output are a stream
// (bytes written come back through cat, in both directions at once,
// more than a pipe holds), its standard error stays apart, closing its
// input ends it, and Wait has its exit status.
func TestExecStream(t *testing.T) {
	_, c := start(t, container.Limits{})
	ctx := context.Background()
	s, err := c.ExecStream(ctx, []string{"sh", "-c", "echo to-stderr >&2; cat; echo after >&2; exit 3"}, container.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	wrote := make(chan error, 1)
	go func() {
		_, err := s.Write(data)
		if err == nil {
			err = s.CloseWrite()
		}
		wrote <- err
	}()
	got, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("read back %d bytes, not the %d written", len(got), len(data))
	}
	res, err := s.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || string(res.Stderr) != "to-stderr\nafter\n" || len(res.Stdout) != 0 {
		t.Errorf("exit %d, stderr %q, stdout %d bytes", res.ExitCode, res.Stderr, len(res.Stdout))
	}
}

// TestExecStreamStops: a cancelled context and Close each kill the
// command and its children, end Read and Write, and Wait says why.
func TestExecStreamStops(t *testing.T) {
	_, c := start(t, container.Limits{})
	for _, how := range []string{"cancel", "close"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := c.ExecStream(ctx, []string{"sh", "-c", "sleep 1000 & echo ready; cat >/dev/null; wait"}, container.ExecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			line := make([]byte, 6)
			if _, err := io.ReadFull(s, line); err != nil || string(line) != "ready\n" {
				t.Fatalf("read %q, %v", line, err)
			}
			begin := time.Now()
			if how == "cancel" {
				cancel()
			} else {
				s.Close()
			}
			if _, err := io.ReadAll(s); err != nil && how == "cancel" && !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "closed") {
				t.Errorf("read after the stop: %v", err)
			}
			res, err := s.Wait()
			switch {
			case how == "cancel" && !errors.Is(err, context.Canceled):
				t.Errorf("Wait after the cancel: %v; want context.Canceled", err)
			case how == "close" && err != nil:
				t.Errorf("Wait after Close: %v", err)
			}
			if d := time.Since(begin); d > 20*time.Second {
				t.Errorf("stopping took %s", d)
			}
			if _, err := s.Write([]byte("x")); err == nil {
				t.Error("Write after the stop succeeded")
			}
			if p := processes(t, c); strings.Contains(p, "sleep 1000") {
				t.Errorf("the command's child outlived the stream (exit %d):\n%s", res.ExitCode, p)
			}
			s.Close()
		})
	}
}
