package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// ShardOf assigns an agent to one of n shards by a jump consistent hash
// (Lamping and Veach) of its id: the assignment depends on the id and n
// only, so agents joining never move the others, and going from n to n+1
// shards moves only the 1/(n+1) of agents the new shard takes.
func ShardOf(agent string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(agent))
	key := h.Sum64()
	var b, j int64 = -1, 0
	for j < int64(n) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}

// ParseShard reads "K/N" (0 ≤ K < N).
func ParseShard(s string) (k, n int, err error) {
	ks, ns, ok := strings.Cut(s, "/")
	if ok {
		_, err = fmt.Sscanf(ks+" "+ns, "%d %d", &k, &n)
	}
	if !ok || err != nil || n < 1 || k < 0 || k >= n || fmt.Sprintf("%d/%d", k, n) != s {
		return 0, 0, fmt.Errorf("shard %q: K/N with 0 ≤ K < N, e.g. 0/4", s)
	}
	return k, n, nil
}

// integratedPath is the file of the commits the last passes integrated
// from remote into the branch into.
func (w *Swarm) integratedPath(remote, into string) string {
	return filepath.Join(w.s.Repo().Dir(), "aiwg-integrated", remote, filepath.FromSlash(shortBranch(into))+".json")
}

// loadIntegrated reads the last integrated commit of each branch (by full
// ref name); an unreadable file is a first pass, which merges everything.
func (w *Swarm) loadIntegrated(remote, into string) (map[string]string, error) {
	seen := map[string]string{}
	data, err := os.ReadFile(w.integratedPath(remote, into))
	if errors.Is(err, fs.ErrNotExist) {
		return seen, nil
	}
	if err != nil {
		return nil, err
	}
	if json.Unmarshal(data, &seen) != nil {
		return map[string]string{}, nil
	}
	return seen, nil
}

// saveIntegrated writes seen, without the branches the remote no longer
// has (tips), atomically.
func (w *Swarm) saveIntegrated(remote, into string, seen map[string]string, tips map[string]plumbing.Hash) error {
	for name := range seen {
		if _, ok := tips[name]; !ok {
			delete(seen, name)
		}
	}
	path := w.integratedPath(remote, into)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(seen, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
