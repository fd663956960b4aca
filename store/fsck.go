package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/go-git/go-git/v5/plumbing"
)

// FsckProblem is one thing Fsck found wrong: which check, the file at
// fault (when one is), what is wrong, and what repairs it.
type FsckProblem struct {
	Check   string `json:"check"`
	File    string `json:"file,omitempty"`
	Problem string `json:"problem"`
	Repair  string `json:"repair"`
}

// An FsckCheck is a feature's check in Fsck (Options.Fsck), of the
// files of the default branch's head, the tree root, after the core's
// own checks. Name is the check as the report lists it. Run reads the
// files through read, which reports a damaged object as a "files"
// problem and reads it as missing, and returns the problems it found; an
// error means the check could not run.
type FsckCheck struct {
	Name string
	Run  func(ctx context.Context, s *Store, root plumbing.Hash, read func(path string) ([]byte, error)) ([]FsckProblem, error)
}

// FsckReport is what Fsck checked and found.
type FsckReport struct {
	Checks   []string      `json:"checks"`
	Problems []FsckProblem `json:"problems"`
	// Warnings are states that damage nothing but that a user of git
	// should know of (git shows a history other than the store's).
	Warnings []FsckProblem `json:"warnings,omitempty"`
}

// Fsck checks the store: git's own `git fsck --strict` (objects,
// connectivity, names), every pack against its checksums, the history
// index, and on the default branch's head the manifest (.aiwg/store.json),
// the access policy (.aiwg/policy.json), the time-to-live files
// (.aiwg/ttl/), then the checks of the features
// the store was opened with (Options.Fsck: the document schemas with the
// documents they rule). It reads and writes nothing of the store's history;
// a problem found is in the report, and an error is returned only when a
// check could not run.
func (s *Store) Fsck(ctx context.Context) (*FsckReport, error) {
	rep := &FsckReport{Problems: []FsckProblem{}}
	add := func(p FsckProblem) { rep.Problems = append(rep.Problems, p) }
	rep.Warnings = s.replacementWarnings()

	rep.Checks = append(rep.Checks, "packs")
	damaged, err := s.repo.VerifyPacks(ctx)
	if err != nil {
		return nil, err
	}
	for _, d := range damaged {
		var ce *repo.CorruptError
		if !errors.As(d, &ce) {
			continue
		}
		repair := "restore this pack from a backup or a clone holding its objects (`git fetch` from a remote that has them), then `aiwg-state gc --full`"
		if strings.HasSuffix(ce.File, ".idx") {
			repair = "rebuild the index from its pack: move " + ce.File + " aside, then run `git index-pack " + strings.TrimSuffix(ce.File, ".idx") + ".pack` in the store"
		}
		add(FsckProblem{Check: "packs", File: ce.File, Problem: ce.Reason, Repair: repair})
	}

	leftovers, err := s.repo.PackLeftovers()
	if err != nil {
		return nil, err
	}
	for _, l := range leftovers {
		switch l.Kind {
		case repo.PackWithoutIndex:
			add(FsckProblem{Check: "packs", File: l.File, Problem: "a pack without its index: git cannot read its objects",
				Repair: "`aiwg-state gc` indexes it again (git index-pack)"})
		case repo.IndexWithoutPack:
			add(FsckProblem{Check: "packs", File: l.File, Problem: "an index without its pack (git counts it as garbage)",
				Repair: "`aiwg-state gc` removes it"})
		case repo.StrayPackFile:
			add(FsckProblem{Check: "packs", File: l.File, Problem: "left beside a pack that is gone (git counts it as garbage)",
				Repair: "`aiwg-state gc` removes it"})
		}
	}

	rep.Checks = append(rep.Checks, "git fsck --strict")
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", "--git-dir", s.repo.Dir(), "fsck", "--strict", "--no-progress", "--no-dangling")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, fmt.Errorf("git fsck: %w", err)
		}
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = err.Error()
		}
		add(FsckProblem{Check: "git fsck --strict", Problem: msg,
			Repair: "objects reported missing or corrupt come back with `git fetch` from a remote that has them; a multi-pack-index naming a missing pack is dropped by `aiwg-state gc`"})
	}

	rep.Checks = append(rep.Checks, "history index")
	if err := audit.Open(s.repo).Verify(); err != nil {
		add(FsckProblem{Check: "history index", File: audit.IndexDir + "/snapshot", Problem: err.Error(),
			Repair: "`aiwg-state reindex` rebuilds it from git (queries meanwhile read history from git, slower but right)"})
	}

	root, err := s.Tree(ReadOptions{})
	if errors.Is(err, repo.ErrNotFound) {
		return rep, nil // an empty store: no files to check
	}
	if errors.Is(err, repo.ErrCorrupt) {
		add(FsckProblem{Check: "files", Problem: err.Error(), Repair: "repair the damaged pack named (above) first"})
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	rep.Checks = append(rep.Checks, "manifest", "policy", "ttl")
	for _, c := range s.fsck {
		rep.Checks = append(rep.Checks, c.Name)
	}
	plain := treeReader(s.repo, root)
	read := func(p string) ([]byte, error) {
		data, err := plain(p)
		if errors.Is(err, repo.ErrCorrupt) {
			add(FsckProblem{Check: "files", File: p, Problem: err.Error(), Repair: "repair the damaged pack named first"})
			return nil, repo.ErrNotFound // reported: the other checks go on
		}
		return data, err
	}
	if data, err := read(ManifestPath); err == nil {
		if _, err := parseManifest(data); err != nil {
			add(FsckProblem{Check: "manifest", File: ManifestPath, Problem: "not valid JSON: " + err.Error(),
				Repair: "`aiwg-state config KEY VALUE` writes a manifest of the defaults and that setting"})
		} else if err := CheckManifest(data); err != nil {
			add(FsckProblem{Check: "manifest", File: ManifestPath, Problem: err.Error(),
				Repair: "`aiwg-state config KEY VALUE` for the setting at fault, or commit a fixed " + ManifestPath})
		}
	} else if !errors.Is(err, repo.ErrNotFound) {
		return nil, err
	}
	if data, err := read(policy.Path); err == nil {
		if _, err := policy.Parse(data); err != nil {
			add(FsckProblem{Check: "policy", File: policy.Path, Problem: err.Error(),
				Repair: "`aiwg-state policy set FILE` with a valid policy (`aiwg-state policy show` reads the one in force)"})
		}
	} else if !errors.Is(err, repo.ErrNotFound) {
		return nil, err
	}
	if err := s.fsckTTL(root, read, add); err != nil {
		return nil, err
	}
	for _, c := range s.fsck {
		found, err := c.Run(ctx, s, root, read)
		if err != nil {
			return nil, err
		}
		rep.Problems = append(rep.Problems, found...)
	}
	return rep, nil
}
