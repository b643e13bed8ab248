package collect

import (
	"context"
	"fmt"
	"path"
	"sync"
)

// sourceCache holds repository files read from the environment image, for
// prompts.
type sourceCache struct {
	mu    sync.Mutex
	files map[string]string
}

// readSources returns the text of repository files (relative paths), read
// once from a container of the environment image.
func (r *repoRun) readSources(ctx context.Context, files []string) (map[string]string, error) {
	r.src.mu.Lock()
	defer r.src.mu.Unlock()
	if r.src.files == nil {
		r.src.files = map[string]string{}
	}
	var missing []string
	for _, f := range files {
		if _, ok := r.src.files[f]; !ok {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		b, err := openBox(ctx, r.o.lease, r.env.Image, r.rc.Repository, r.lim, "")
		if err != nil {
			return nil, err
		}
		defer b.close()
		for _, f := range missing {
			out, err := b.c.CopyOut(ctx, path.Join(repoDir, f), 16<<20)
			if err != nil || len(out) != 1 {
				return nil, fmt.Errorf("reading %s from the image: %v", f, err)
			}
			r.src.files[f] = string(out[0].Data)
		}
	}
	out := make(map[string]string, len(files))
	for _, f := range files {
		out[f] = r.src.files[f]
	}
	return out, nil
}
