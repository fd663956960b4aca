package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// PackLeftoverKind says what is wrong with a file of the pack directory
// that PackLeftovers reports.
type PackLeftoverKind int

const (
	// PackWithoutIndex: a .pack no .idx indexes. git cannot read its
	// objects; RecoverPacks indexes it again with `git index-pack`.
	PackWithoutIndex PackLeftoverKind = iota + 1
	// IndexWithoutPack: an .idx whose .pack is gone. git ignores it and
	// `git count-objects -v` reports it as garbage; maintenance removes it.
	IndexWithoutPack
	// StrayPackFile: a .bitmap or .rev whose .pack is gone (git's
	// garbage too); maintenance removes it.
	StrayPackFile
)

// PackLeftover is one file of objects/pack that a crash or an older
// writer left in a state git reports.
type PackLeftover struct {
	File string // relative to the git directory
	Kind PackLeftoverKind
}

// leftoverMinAge: files younger than this may be a live writer's, between
// two renames or unlinks a few microseconds apart; they are not reported.
const leftoverMinAge = 5 * time.Second

// PackLeftovers lists the pack files in a state git reports: a .pack
// without its index (objects no one can read until it is indexed again),
// and indexes, bitmaps and reverse indexes without their pack. It changes
// nothing.
func (r *Repo) PackLeftovers() ([]PackLeftover, error) {
	dir := filepath.Join(r.dir, "objects", "pack")
	es, names, err := packDirNames(dir)
	if err != nil || es == nil {
		return nil, err
	}
	var out []PackLeftover
	for _, e := range es {
		n := e.Name()
		if !strings.HasPrefix(n, "pack-") {
			continue
		}
		ext := filepath.Ext(n)
		stem := strings.TrimSuffix(n, ext)
		var kind PackLeftoverKind
		switch {
		case ext == ".pack" && !names[stem+".idx"]:
			kind = PackWithoutIndex
		case ext == ".idx" && !names[stem+".pack"]:
			kind = IndexWithoutPack
		case (ext == ".bitmap" || ext == ".rev") && !names[stem+".pack"]:
			kind = StrayPackFile
		default:
			continue
		}
		if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < leftoverMinAge {
			continue
		}
		out = append(out, PackLeftover{File: "objects/pack/" + n, Kind: kind})
	}
	return out, nil
}

// RecoverPacks indexes again, with `git index-pack`, every .pack that has
// no .idx: a writer killed between renaming a pack and its index into
// place leaves one, and so did an older aiwg-state whose index a `git gc`
// deleted as garbage before the pack appeared (the objects of a published
// commit, which git could then not find). The index is written under a
// temporary name and linked into place only if none appeared meanwhile
// (a live writer finishing). It returns the packs indexed; a pack that
// git cannot index (truncated by a crash) is reported in the error and
// left as it is.
func (r *Repo) RecoverPacks(ctx context.Context) ([]string, error) {
	dir := filepath.Join(r.dir, "objects", "pack")
	es, names, err := packDirNames(dir)
	if err != nil || es == nil {
		return nil, err
	}
	var done []string
	var errs []error
	for _, e := range es {
		n := e.Name()
		stem, ok := strings.CutSuffix(n, ".pack")
		if !ok || !strings.HasPrefix(n, "pack-") || names[stem+".idx"] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return done, err
		}
		if err := r.indexPack(ctx, dir, stem); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, "objects/pack/"+n)
	}
	if len(errs) > 0 {
		return done, errors.Join(errs...)
	}
	return done, nil
}

// indexPack writes the index of dir/stem.pack with git index-pack.
func (r *Repo) indexPack(ctx context.Context, dir, stem string) error {
	// The pid in the name: a killed gc's temporary index is swept at once
	// (see removeStaleTemp).
	tmp := filepath.Join(dir, "tmp_idx_"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(rand.Uint64(), 36))
	defer os.Remove(tmp)
	var out bytes.Buffer
	// No reverse index: git would name it after the temporary index.
	cmd := exec.CommandContext(ctx, "git", "--git-dir", r.dir, "-c", "pack.writeReverseIndex=false",
		"index-pack", "-o", tmp, filepath.Join(dir, stem+".pack"))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &CorruptError{File: "objects/pack/" + stem + ".pack",
			Reason: "it has no index, and git index-pack cannot index it: " + strings.TrimSpace(out.String())}
	}
	if err := os.Chmod(tmp, 0o444); err != nil {
		return err
	}
	// A link fails if the index appeared meanwhile (its writer finished):
	// that one stays.
	if err := os.Link(tmp, filepath.Join(dir, stem+".idx")); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("index %s.pack: %w", stem, err)
	}
	return nil
}

// packDirNames lists the pack directory, and its names as a set; none,
// and no error, when it does not exist.
func packDirNames(dir string) ([]os.DirEntry, map[string]bool, error) {
	es, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	names := make(map[string]bool, len(es))
	for _, e := range es {
		names[e.Name()] = true
	}
	return es, names, nil
}
