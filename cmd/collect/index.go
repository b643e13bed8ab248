package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/featbench/featbench/internal/pyindex"
)

// cmdIndex serves a folder of wheels as a package index (PEP 503 pages,
// PEP 691 JSON with PEP 700 upload times) until interrupted: the index a
// repository with network = "build" reaches through the build gate, on a
// machine without one of its own.
func cmdIndex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("collect index", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: collect index --dir WHEELS [--addr 127.0.0.1:8080]

Serves the wheels and source archives of a folder as a package index, at
http://ADDR/simple/ (each file's modification time is its upload time), for
index_url in a [[collect.repo]] table with network = "build". It reads the
folder at each request. Stop it with Ctrl-C.

Flags:
`)
		fs.PrintDefaults()
	}
	dir := fs.String("dir", "", "the `FOLDER` of wheels and source archives")
	addr := fs.String("addr", "127.0.0.1:8080", "the `HOST:PORT` to listen on")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if *dir == "" || fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	if fi, err := os.Stat(*dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("--dir %s: not a folder", *dir)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: pyindex.NewFolder(*dir), ReadHeaderTimeout: time.Minute}
	fmt.Fprintf(stdout, "serving %s at http://%s/simple/\n", *dir, ln.Addr())
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
