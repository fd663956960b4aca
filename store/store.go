package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/internal/storedir"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/statedoc"
)

// DefaultDir is where a store lives under a project, found again from any
// subdirectory as git finds .git.
const DefaultDir = ".aiwg/state.git"

// Paths of the store's own files inside its tree.
const (
	ManifestPath   = ".aiwg/store.json"
	AttributesPath = ".gitattributes"
)

// Store is an open store. Its methods are safe for concurrent use, and
// several processes may use one store at once.
type Store struct {
	repo   *repo.Repo
	branch string // full ref name of the default branch
	now    func() time.Time
	// workTree is set when the store is a git clone's .git: the branch
	// checked out there must not move under its files.
	workTree string
	// cache is the features' cache of what they derive from the store's
	// files (see Cache).
	cache sync.Map
	// signing caches the store's git config (its agent, its signing
	// keys) by content, and the keys that sign writes.
	signing signingConfig
	// guards and after: see Options.
	guards      []Guard
	after       []AfterCommit
	fastForward []FastForwardGuard
	fsck        []FsckCheck
	// noSync: opened with Options.NoSync, so the manifest's setting is
	// never asked.
	noSync bool
	// base is the store this handle was lent from (see Lend), whose
	// repository, caches and signing configuration it uses; nil in a
	// store Open, Init or Clone made.
	base *Store
}

// Discover finds the store for a working directory: $AIWG_STATE_STORE when
// set, else the nearest .aiwg/state.git in start or its parents.
func Discover(start string) (string, error) {
	if env := os.Getenv("AIWG_STATE_STORE"); env != "" {
		return env, nil
	}
	return FindStore(start)
}

// FindStore finds the nearest .aiwg/state.git in start or its parents, as
// git finds .git, or the nearest git clone of a store (a work tree whose
// checkout holds the store's manifest, as CI checks a store out); it does
// not consult the environment (see Discover).
func FindStore(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	if store := storedir.Find(dir); store != "" {
		return store, nil
	}
	return "", &StoreMissingError{}
}

// Init creates a store at dir: a bare repository whose first commit on the
// branch (default "main") holds the manifest and the default merge
// strategies in .gitattributes.
func Init(ctx context.Context, dir string, opts InitOptions) (*Store, error) {
	branch := opts.Branch
	if branch == "" {
		branch = "main"
	}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		return nil, errkind.Errorf(ErrExists, "a store already exists at %s", dir)
	}
	// A store gets a directory of its own: a failed init removes what it
	// made, which must never be someone's files.
	if es, err := os.ReadDir(dir); err == nil && len(es) > 0 {
		return nil, errkind.Errorf(ErrExists, "%s is not empty; a store needs a directory of its own", dir)
	}
	// A file where the store or a directory above it would go.
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			if !fi.IsDir() {
				return nil, errkind.Errorf(ErrExists, "%s is a file, where the store needs a directory", d)
			}
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	r, err := repo.Init(ctx, dir, branch, repo.Options{Sync: !opts.NoSync})
	if err != nil {
		return nil, err
	}
	s := &Store{repo: r, branch: "refs/heads/" + branch, now: time.Now, guards: opts.Guards, after: opts.After, fastForward: opts.FastForward, fsck: opts.Fsck}
	agent := opts.Agent
	if agent == "" {
		agent = "aiwg-state"
	}
	_, err = s.Commit(ctx, WriteOptions{Agent: agent}, "init", func(tx *repo.Tx, rec *Recorder) error {
		if err := tx.WriteFile(ManifestPath, defaultManifest()); err != nil {
			return err
		}
		rec.Add("create", ManifestPath, "")
		if err := tx.WriteFile(AttributesPath, []byte(DefaultAttributes)); err != nil {
			return err
		}
		rec.Add("create", AttributesPath, "")
		if err := tx.WriteFile(statedoc.DefaultPath, statedoc.DefaultStateDocument()); err != nil {
			return err
		}
		rec.Add("create", statedoc.DefaultPath, "")
		return nil
	})
	if err != nil {
		r.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("init: %w", err)
	}
	return s, nil
}

// StoreDir is the git directory that dir names as a store: dir itself,
// or the .git of a git clone's work tree (see FindStore), so that a
// clone's directory works as --store does for a store.
func StoreDir(dir string) string { return storedir.Resolve(dir) }

// Open opens the store at dir: a store's git directory, or the work tree
// of a git clone of one (see FindStore). In a clone, the branch checked
// out is not written and HEAD is not moved (see Store.WorkTree).
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	s := &Store{now: time.Now, guards: opts.Guards, after: opts.After, fastForward: opts.FastForward, fsck: opts.Fsck}
	dir = StoreDir(dir)
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, DefaultDir, "HEAD")); err == nil {
			return nil, errkind.Errorf(ErrNotFound, "no store at %s: it is a project directory, whose store is %s", dir, filepath.Join(dir, DefaultDir))
		}
		return nil, &StoreMissingError{Dir: dir}
	} else if err != nil {
		return nil, err
	}
	if filepath.Base(dir) == ".git" {
		if _, ok := storedir.CloneGitDir(filepath.Dir(dir)); ok {
			s.workTree = filepath.Dir(dir)
		}
	}
	// The store's own sync setting is read at the first write, not here:
	// most commands only read.
	r, err := repo.Open(ctx, dir, repo.Options{Sync: !opts.NoSync, SyncOff: s.syncOff})
	if err != nil {
		return nil, err
	}
	s.repo, s.noSync = r, opts.NoSync
	if opts.Branch != "" {
		s.branch = branchRef(opts.Branch)
	} else if s.branch, err = s.Head(); err != nil {
		r.Close()
		return nil, err
	}
	return s, nil
}

// Head is the branch HEAD names. A git clone may have a commit checked
// out rather than a branch (CI checks pull requests out so): there "HEAD"
// itself is the default, which reads take as that commit and writes
// refuse (it is not a branch).
func (s *Store) Head() (string, error) {
	ref, err := s.repo.Head()
	if errors.Is(err, repo.ErrDetached) && s.workTree != "" {
		return "HEAD", nil
	}
	return ref, err
}

// syncOff reports whether the manifest on the default branch turns fsync
// off (see Manifest.Sync).
func (s *Store) syncOff() bool {
	root, err := s.Tree(ReadOptions{})
	if err != nil {
		return false
	}
	m, err := s.manifestAt(root)
	return err == nil && m.Sync != nil && !*m.Sync
}

// SyncStale reports whether the manifest on the default branch now asks
// for another sync setting than the one the store's writes settled on
// (see Manifest.Sync): a store kept open while someone changed it, which
// a server then opens again.
func (s *Store) SyncStale() bool {
	b := s.root()
	if b.noSync {
		return false
	}
	return b.repo.Options().Sync == b.syncOff()
}

// Lend returns another handle on the open store s, for one caller with
// options of its own: its default branch is what Open with opts would
// give now (opts.Branch, else HEAD read again). It shares s's repository,
// so its writes join s's group commits and its reads find s's caches
// warm, and it costs no files and no memory of its own. A server lends
// one to each command it runs at once. Guards, hooks and the sync
// setting are s's; closing the handle does nothing, and it must not be
// used after s is closed.
func (s *Store) Lend(opts Options) (*Store, error) {
	b := s.root()
	l := &Store{repo: b.repo, now: b.now, workTree: b.workTree, guards: b.guards, after: b.after,
		fastForward: b.fastForward, fsck: b.fsck, base: b}
	if opts.Branch != "" {
		l.branch = branchRef(opts.Branch)
		return l, nil
	}
	head, err := l.Head()
	if err != nil {
		return nil, err
	}
	l.branch = head
	return l, nil
}

// root is the store that owns the repository and the caches.
func (s *Store) root() *Store {
	if s.base != nil {
		return s.base
	}
	return s
}

// Close releases the store's files (a lent handle has none of its own).
func (s *Store) Close() error {
	if s.base != nil {
		return nil
	}
	return s.repo.Close()
}

// Repo is the git layer under the store, for what the porcelain does not
// cover.
func (s *Store) Repo() *repo.Repo { return s.repo }

// Now is the store's clock: what a feature judges expiry by, as the core
// does.
func (s *Store) Now() time.Time { return s.now() }

// Cache holds what the features derive from the store's files (parsed
// rules, compiled schemas) for the life of the open store. Keys must
// name the content they were derived from (a hash of it), never only a
// path, as files change under the store; each feature prefixes its own.
func (s *Store) Cache() *sync.Map { return &s.root().cache }

// Dir is the store's git directory.
func (s *Store) Dir() string { return s.repo.Dir() }

// WorkTree is the work tree when the store is a git clone's .git (see
// Open), else "".
func (s *Store) WorkTree() string { return s.workTree }

// Branch is the store's default branch, as a short name.
func (s *Store) Branch() string { return strings.TrimPrefix(s.branch, "refs/heads/") }

func branchRef(b string) string {
	if strings.HasPrefix(b, "refs/") {
		return b
	}
	return "refs/heads/" + b
}

// WriteRef is the ref a write on branch moves: a branch (refs/heads/…),
// never a remote-tracking branch (the next fetch would drop the write), a
// tag, or a merge in progress (which has its own guard).
func (s *Store) WriteRef(branch string) (string, error) {
	ref := s.Ref(branch)
	if !strings.HasPrefix(ref, "refs/heads/") {
		return "", fmt.Errorf("%w: %s is not a branch; writes go to refs/heads/", ErrReadOnly, ref)
	}
	// A branch that is an alias of another (git symbolic-ref) is written
	// through, as git commit does: the write, and the guards of a merge in
	// progress and of a checked-out branch, are the named branch's.
	ref, err := s.repo.RefTarget(ref)
	if err != nil {
		return "", err
	}
	if s.workTree != "" {
		// As git refuses a push to a checked-out branch: the commit would
		// land, and the work tree's files would show it undone.
		if head, err := s.repo.Head(); err == nil && s.RefTarget(head) == ref {
			return "", errkind.Errorf(ErrReadOnly, "%s is checked out in the git clone %s: a write would leave its files behind the branch (write to another branch, or to the store it was cloned from)", shortBranch(ref), s.workTree)
		}
	}
	return ref, nil
}

// RefTarget is the branch ref names, following an alias; ref itself when
// it cannot be followed.
func (s *Store) RefTarget(ref string) string {
	if t, err := s.repo.RefTarget(ref); err == nil {
		return t
	}
	return ref
}

func (s *Store) Ref(branch string) string {
	if branch == "" {
		return s.branch
	}
	return branchRef(branch)
}

// Resolve turns a revision into a commit id; revisions relative to HEAD
// (HEAD~2) and times are taken on branch ("" = the default branch).
func (s *Store) Resolve(rev, branch string) (plumbing.Hash, error) {
	if rev == "" {
		rev = "HEAD"
	}
	ref := s.Ref(branch)
	h, err := s.repo.Resolve(rev, ref)
	if err != nil {
		if _, rerr := s.repo.Ref(ref); errors.Is(rerr, repo.ErrNotFound) {
			// Not a local branch: a remote-tracking one (origin/main after
			// a fetch) can be read, not written.
			short, local := strings.CutPrefix(ref, "refs/heads/")
			remote := "refs/remotes/" + short
			if _, rerr := s.repo.Ref(remote); !local || rerr != nil {
				return plumbing.ZeroHash, fmt.Errorf("branch %s: %w", short, ErrNotFound)
			}
			h, err = s.repo.Resolve(rev, remote)
		}
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("revision %s: %w", rev, err)
	}
	return h, nil
}

// IgnoreFile is what KeepOutOfWorkTree writes: git ignores every file
// beside it and below, itself included.
const IgnoreFile = "# aiwg-state: the store's own files (packs, locks, refs) are not the\n# project's; its history lives in the store itself.\n*\n"

// KeepOutOfWorkTree keeps a store made inside a git work tree (a project
// that is a git repository) out of that project: without it, `git add .`
// there would add the store's packs, locks and refs. It writes a
// .gitignore that ignores everything in .aiwg/ when the store is
// .aiwg/state.git, else in the store's directory itself, and returns its
// path; "" when dir is not in a work tree, git is not installed, or an
// ignore file is there already (someone's own, kept as it is).
func KeepOutOfWorkTree(ctx context.Context, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	parent := filepath.Dir(abs)
	if !inWorkTree(ctx, parent) {
		return "", nil
	}
	target := abs
	if filepath.Base(parent) == filepath.Dir(DefaultDir) {
		target = parent
	}
	path := filepath.Join(target, ".gitignore")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(IgnoreFile); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// inWorkTree asks git whether dir is inside a work tree, as git itself
// would decide it (GIT_DIR and its kin from the environment left out: they
// name some other repository aiwg-state may run under).
func inWorkTree(ctx context.Context, dir string) bool {
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--is-inside-work-tree")
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_NAMESPACE":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == "true"
}
