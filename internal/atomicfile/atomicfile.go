// Package atomicfile writes files whole or not at all: through a temporary
// file in the same folder and a rename, so a reader (or a run killed
// half-way) sees the old file or the new one, never a part.
package atomicfile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Write writes data to path with mode 0644.
func Write(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteJSON writes v as indented JSON ending in a newline.
func WriteJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return Write(path, append(raw, '\n'))
}

// Log is a file written as it goes (a log, a trajectory), which cannot
// be written whole at once: the first error writing it is kept (a
// fmt.Fprintf to it drops errors), and Close syncs it and reports that
// error, so that the caller counts nothing of what the file was to hold
// unless it was all written. It is safe for concurrent writes.
type Log struct {
	mu   sync.Mutex
	f    *os.File
	name string
	err  error
}

// CreateLog creates (or truncates) the log at path.
func CreateLog(path string) (*Log, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &Log{f: f, name: path}, nil
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	if l.f == nil {
		return 0, fmt.Errorf("writing %s: %w", l.name, os.ErrClosed)
	}
	n, err := l.f.Write(p)
	if err != nil {
		l.err = fmt.Errorf("writing %s: %w", l.name, err)
	}
	return n, err
}

// Close syncs and closes the log (once; later calls say the same), and
// says whether all of it was written.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return l.err
	}
	f := l.f
	l.f = nil
	if err := f.Sync(); err != nil && l.err == nil {
		l.err = fmt.Errorf("writing %s: %w", l.name, err)
	}
	if err := f.Close(); err != nil && l.err == nil {
		l.err = fmt.Errorf("writing %s: %w", l.name, err)
	}
	return l.err
}
