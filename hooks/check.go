package hooks

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/event"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Rules a pushed commit is checked against, as named in refusals.
const (
	RuleStorePath     = "store-path"
	RuleCanonicalJSON = "canonical-json"
	RuleLimit         = "limit"
	RulePolicy        = "policy"
	RuleSigned        = "signed"
	RuleConflicts     = "conflicts"
	RuleRef           = "ref"
	RuleVerbiage      = "verbiage"
	RuleSchema        = "schema"
	RuleSettings      = "store-settings" // a policy or manifest that does not parse and validate
	RuleCommitFormat  = "commit-format"  // a commit git and aiwg-state read differently, or with too many parents
)

// MaxParents bounds the parents of a pushed commit: a merge's check asks
// git for the merge bases of every pair of its parents. aiwg-state's own
// merges have two.
const MaxParents = 16

// mergeRefPrefix is where aiwg-state keeps a merge in progress (see the
// root package's MergeRefPrefix): its tree is a conflict record, not state.
const mergeRefPrefix = "refs/aiwg/merge/"

// refRule says why a ref may not be pushed at all: only branches and tags
// hold state, and a merge in progress is resolved before it is shared.
func refRule(ref string) (string, string) {
	if why := objectIDRef(ref); why != "" {
		return RuleRef, why
	}
	switch {
	case strings.HasPrefix(ref, "refs/heads/"), strings.HasPrefix(ref, "refs/tags/"):
		// git reads HEAD, and a name under refs/, as those refs before
		// any branch or tag of that name: such a ref would name one thing
		// to git and another to whoever pushed it.
		if short := shortRef(ref); short == "HEAD" || strings.HasPrefix(short, "refs/") {
			return RuleRef, fmt.Sprintf("no branch or tag is named %s: git reads that name as another ref", short)
		}
		return "", ""
	case strings.HasPrefix(ref, mergeRefPrefix):
		return RuleConflicts, "a merge in progress has unresolved conflicts: resolve them and run merge --continue, then push the branch"
	}
	return RuleRef, "only branches (refs/heads/) and tags (refs/tags/) are accepted"
}

// shortRef is a branch's or tag's name: its ref without refs/heads/ or
// refs/tags/.
func shortRef(ref string) string {
	if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return b
	}
	return strings.TrimPrefix(ref, "refs/tags/")
}

// ErrRefused: the push breaks a rule of the store.
var ErrRefused = errors.New("push refused")

// Update is one ref a push moves: pre-receive reads "OLD NEW REF" lines.
type Update struct {
	Old, New plumbing.Hash
	Ref      string
}

// ParseUpdates reads pre-receive's standard input.
func ParseUpdates(r io.Reader) ([]Update, error) {
	var ups []Update
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		f := strings.Split(line, " ")
		if len(f) != 3 || !plumbing.IsHash(f[0]) || !plumbing.IsHash(f[1]) || !strings.HasPrefix(f[2], "refs/") {
			return nil, fmt.Errorf("pre-receive input: malformed line %q", line)
		}
		ups = append(ups, Update{Old: plumbing.NewHash(f[0]), New: plumbing.NewHash(f[1]), Ref: f[2]})
	}
	return ups, sc.Err()
}

// Violation is one broken rule: which ref, commit, agent, path and rule.
type Violation struct {
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit"`
	Agent  string `json:"agent"`
	Path   string `json:"path,omitempty"`
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}

func (v Violation) String() string {
	var b strings.Builder
	if v.Ref != "" {
		b.WriteString(v.Ref + ": ")
	}
	fmt.Fprintf(&b, "commit %s by agent %q", short(v.Commit), v.Agent)
	if v.Path != "" {
		b.WriteString(": " + v.Path)
	}
	fmt.Fprintf(&b, ": rule %s: %s", v.Rule, v.Detail)
	return b.String()
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// RefusedError lists every violation found; it wraps ErrRefused, and
// policy.ErrDenied when the access policy is among the broken rules.
type RefusedError struct{ Violations []Violation }

func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString(ErrRefused.Error() + ":")
	for i, v := range e.Violations {
		if i == 5 {
			fmt.Fprintf(&b, " (and %d more)", len(e.Violations)-5)
			break
		}
		if i > 0 {
			b.WriteString(";")
		}
		b.WriteString(" " + v.String())
	}
	return b.String()
}

func (e *RefusedError) Unwrap() []error {
	for _, v := range e.Violations {
		if v.Rule == RulePolicy {
			return []error{ErrRefused, policy.ErrDenied}
		}
	}
	return []error{ErrRefused}
}

// Options tune a check.
type Options struct {
	// PolicyFrom is the revision whose tree holds the policy and limits in
	// force. By default, on a server (Check), the default branch before
	// the push: the branch HEAD names when it has a commit, else main;
	// for CheckRevs, HEAD.
	PolicyFrom string
	// MaxViolations stops the check after this many (default 50): one
	// broken rule in a long push should not print thousands of lines.
	MaxViolations int
	// Validate checks a file the store knows the schema of (trajectory
	// iterations, ...); it returns the rule broken ("" if none) and why.
	// A file that is not JSON is passed with a nil body, for the rules of
	// a path whatever it holds.
	// The caller supplies it so this package stays below the store.
	Validate func(path string, body []byte) (rule, detail string)
	// Schemas builds, from a reader of the files of the revision whose
	// settings are in force, a check of the documents the store's schema
	// rules name there; nil when it has none. The caller supplies it, as
	// Validate.
	Schemas func(read func(path string) ([]byte, error)) (func(path string, body []byte) (rule, detail string), error)
	// Getenv reads the hook's environment, where the server says who
	// pushes (see Pusher); nil when nobody pushes (policy check).
	Getenv func(string) string
	// Pusher, when set, is who pushes, as if the server had said so
	// (policy check --pusher); Getenv is then not read.
	Pusher string
}

// Check checks the commits a push brings to the repository at gitDir,
// for pre-receive: for each update, the commits reachable from its new
// value and not from any ref the repository has. It returns a
// *RefusedError when a rule is broken.
func Check(ctx context.Context, gitDir string, updates []Update, opts Options) error {
	c, err := newChecker(ctx, gitDir, opts)
	if err != nil {
		return err
	}
	defer c.close()
	for _, u := range updates {
		if rule, detail := refRule(u.Ref); rule != "" {
			if err := c.add(Violation{Ref: u.Ref, Commit: u.New.String(), Rule: rule, Detail: detail}); err != nil {
				break
			}
			continue
		}
		// Who pushes may not move this ref (identity.go).
		if rule, detail := c.checkPusher(u); rule != "" {
			if err := c.add(Violation{Ref: u.Ref, Commit: u.New.String(), Rule: rule, Detail: detail}); err != nil {
				break
			}
			continue
		}
		// History is the audit log: a push may add to it, never take from
		// it. A deletion or a rewind (which would also take the server
		// back to before its policy) and a moved or non-commit tag are
		// refused; an administrator does those on the server itself.
		detail, err := c.refMove(ctx, u)
		if err != nil {
			return err
		}
		if detail != "" {
			if err := c.add(Violation{Ref: u.Ref, Commit: u.New.String(), Rule: RuleRef, Detail: detail}); err != nil {
				break
			}
			continue
		}
		// A new ref's name must not clash with another's, nor make
		// another branch the default one (refs.go).
		if detail, err := c.newRefName(ctx, u, updates); err != nil {
			return err
		} else if detail != "" {
			if err := c.add(Violation{Ref: u.Ref, Commit: u.New.String(), Rule: RuleRef, Detail: detail}); err != nil {
				break
			}
			continue
		}
		// A tag is a checkpoint or a snapshot, whose tagger is held to
		// the rules of a commit's author (refs.go).
		if strings.HasPrefix(u.Ref, "refs/tags/") {
			if ok, err := c.checkTag(ctx, u); err != nil {
				if errors.Is(err, errEnough) {
					break
				}
				return err
			} else if !ok {
				continue
			}
		}
		// Commits that only other refs reach (none are accepted, but a
		// server may have some) are checked when they come onto a branch.
		commits, err := c.revList(ctx, u.New.String(), "--not", "--branches", "--tags")
		if err != nil {
			return err
		}
		if err := c.checkOwnCommits(u, commits); errors.Is(err, errEnough) {
			break
		} else if err != nil {
			return err
		}
		if err := c.checkGained(ctx, u); errors.Is(err, errEnough) {
			break
		} else if err != nil {
			return err
		}
		if err := c.checkCommits(ctx, u.Ref, commits); err != nil {
			return err
		}
		// Checked after the commits, so that a forged merge is refused
		// for what it writes too, not only for how it moves the branch.
		if !u.Old.IsZero() && u.Ref == c.defaultRef(ctx) {
			detail, err := c.firstParentMove(ctx, u)
			if err != nil {
				return err
			}
			if detail != "" {
				if err := c.add(Violation{Ref: u.Ref, Commit: u.New.String(), Rule: RuleRef, Detail: detail}); err != nil {
					break
				}
			}
		}
	}
	return c.result()
}

// refMove says why a ref update is not a push's to make ("" when it is):
// see Check.
func (c *checker) refMove(ctx context.Context, u Update) (string, error) {
	switch {
	case u.New.IsZero():
		return "a push may not delete refs", nil
	case strings.HasPrefix(u.Ref, "refs/tags/") && !u.Old.IsZero():
		return "a tag (a checkpoint or a snapshot) is never moved", nil
	case strings.HasPrefix(u.Ref, "refs/tags/"):
		if _, _, err := c.cat.read(u.New.String() + "^{commit}"); errors.Is(err, errMissing) {
			return "a tag must name a commit", nil
		} else if err != nil {
			return "", err
		}
	case !u.Old.IsZero():
		if c.ancestorHere(u.Old, u.New) {
			break // shown through the commits the push brings (walk.go)
		}
		cmd := exec.CommandContext(ctx, "git", "--git-dir", c.gitDir, "merge-base", "--is-ancestor", u.Old.String(), u.New.String())
		cmd.Env = gitEnv()
		if err := cmd.Run(); err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) && exit.ExitCode() == 1 {
				return "a push may not rewrite history: " + short(u.Old.String()) + " is not an ancestor of " + short(u.New.String()), nil
			}
			return "", fmt.Errorf("git merge-base: %w", err)
		}
	}
	return "", nil
}

// firstParentMove says why an update of the default branch would change
// its first-parent history ("" when it keeps it). That history is what
// log lists and blame credits: the default branch moves only by commits
// whose first-parent chain holds its previous head, so a merge made on
// another branch (an agent's, after syncing) never becomes the default
// branch by a fast-forward that would drop the commits it already had
// from its first-parent history and credit their values to the merge.
func (c *checker) firstParentMove(ctx context.Context, u Update) (string, error) {
	// The first-parent chain from the new head down to what the old head
	// already reaches: its last commit must sit on the old head.
	chain, err := c.revList(ctx, "--first-parent", u.New.String(), "--not", u.Old.String())
	if err != nil || len(chain) == 0 {
		return "", err
	}
	// revList lists oldest first.
	last, err := c.readCommit(chain[0])
	if err != nil {
		return "", err
	}
	if len(last.Parents) > 0 && last.Parents[0] == u.Old {
		return "", nil
	}
	return fmt.Sprintf("%s moves only by commits whose first parent chain holds its head %s: merge into it (first parent %s) rather than moving it onto a merge made elsewhere",
		strings.TrimPrefix(u.Ref, "refs/heads/"), short(u.Old.String()), short(u.Old.String())), nil
}

// defaultRef is the server's default branch: the branch HEAD names when
// it holds a commit, else main. The policy in force is read from it too
// (newChecker), so that the branch whose policy rules and the branch the
// server protects are one. A push may not give HEAD's branch its first
// commit once another branch exists (newRefName): it would make a branch
// that never held the policy the default one.
func (c *checker) defaultRef(ctx context.Context) string {
	if c.defRef == "" {
		c.defRef = "refs/heads/main"
		ref, ok := c.headHere()
		var err error
		if !ok {
			var out []byte
			out, err = exec.CommandContext(ctx, "git", "--git-dir", c.gitDir, "symbolic-ref", "-q", "HEAD").Output()
			ref = strings.TrimSpace(string(out))
		}
		if err == nil && strings.HasPrefix(ref, "refs/heads/") {
			c.headRef = ref
			if _, _, err := c.cat.read(ref + "^{commit}"); err == nil {
				c.defRef = ref
			}
		}
	}
	return c.defRef
}

// CheckRevs checks the commits rev-list selects with revs ("main",
// "origin/main..main", "main --not --remotes"): the same checks a server
// makes, run on a local store.
func CheckRevs(ctx context.Context, gitDir string, revs []string, opts Options) error {
	// A local store's policy is its HEAD's, an agent branch's included;
	// the default branch's while HEAD has no commit.
	if opts.PolicyFrom == "" && exec.CommandContext(ctx, "git", "--git-dir", gitDir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").Run() == nil {
		opts.PolicyFrom = "HEAD"
	}
	c, err := newChecker(ctx, gitDir, opts)
	if err != nil {
		return err
	}
	defer c.close()
	for _, r := range revs {
		if strings.HasPrefix(r, "-") && r != "--not" && r != "--all" && r != "--remotes" && r != "--branches" {
			return fmt.Errorf("revision %q: %w", r, errMissing)
		}
	}
	if err := c.knownPusher(); err != nil {
		return err
	}
	commits, err := c.revList(ctx, revs...)
	if err != nil {
		return err
	}
	if err := c.checkCommits(ctx, "", commits); err != nil {
		return err
	}
	return c.result()
}

type checker struct {
	gitDir     string
	defRef     string // the default branch, once looked up
	cat        *catFile
	policy     *policy.Policy
	manifest   store.Manifest // the store's settings in force
	validate   func(path string, body []byte) (string, string)
	schemas    func(read func(path string) ([]byte, error)) (func(path string, body []byte) (string, string), error)
	ruledBy    func(path string, body []byte) (string, string) // the schema check in force
	badPolicy  string                                          // why the policy in force does not parse; policy is then the last that did
	max        int
	violations []Violation
	seen       map[string]bool
	trees      map[string][]treeEntry
	id         identity // who pushes (identity.go)
	ctx        context.Context
	bases      map[[2]string][]string // merge bases per pair of commits (diff.go)

	headRef string         // the branch HEAD names, born or not ("" when none)
	tags    map[string]int // checkpoints per state this push creates (refs.go)
	tagsHad map[string]int // checkpoints per state the server has, once counted
}

var errEnough = errors.New("enough violations")

func newChecker(ctx context.Context, gitDir string, opts Options) (*checker, error) {
	cat, err := newCatFile(ctx, gitDir)
	if err != nil {
		return nil, err
	}
	c := &checker{ctx: ctx, gitDir: gitDir, cat: cat, manifest: store.DefaultManifest(), max: opts.MaxViolations,
		seen: map[string]bool{}, trees: map[string][]treeEntry{}, validate: opts.Validate, schemas: opts.Schemas}
	if c.max <= 0 {
		c.max = 50
	}
	from := opts.PolicyFrom
	if from == "" {
		// The default branch: HEAD's, or main while HEAD's is unborn (a
		// server made with plain git init --bare has HEAD on master).
		from = c.defaultRef(ctx)
	}
	if err := c.loadSettings(from); err != nil {
		cat.close()
		return nil, err
	}
	if err := c.loadIdentity(ctx, opts, from); err != nil {
		cat.close()
		return nil, err
	}
	return c, nil
}

func (c *checker) close() { c.cat.close() }

// loadSettings reads the policy and limits in force. A revision without a
// commit (a new, empty server) has none: everything is allowed.
func (c *checker) loadSettings(rev string) error {
	if _, _, err := c.cat.read(rev + "^{commit}"); errors.Is(err, errMissing) {
		return nil
	} else if err != nil {
		return err
	}
	if err := c.checkSettingsTrees(rev); err != nil {
		return err
	}
	if _, body, err := c.cat.read(rev + ":" + policy.Path); err == nil {
		p, err := policy.Parse(body)
		if err != nil {
			// A broken policy in force (written on the server with plain
			// git, or accepted before pushes were checked for it) must not
			// refuse every push, the repair included, nor let everything
			// through: only a push that changes the policy alone is
			// accepted, from whom the last policy that parsed lets write
			// it (checkPolicy).
			c.badPolicy = fmt.Sprintf("the policy in force (%s at %s) is broken: %v", policy.Path, rev, err)
			if c.policy, err = c.lastValidPolicy(rev); err != nil {
				return err
			}
		} else {
			c.policy = p
		}
	} else if !errors.Is(err, errMissing) {
		return err
	}
	// The settings in force are read as the store reads its own; ones
	// that do not read (written on the server with plain git) leave the
	// defaults in force, rather than refuse every push, the repair too.
	files := commitFiles{c: c, commit: rev}
	m, err := store.ReadManifest(files)
	var broken *store.BrokenFileError
	if err != nil && !errors.As(err, &broken) {
		return err
	}
	c.manifest = m
	if c.schemas != nil {
		read := func(path string) ([]byte, error) {
			_, body, err := c.cat.read(rev + ":" + path)
			if errors.Is(err, errMissing) {
				return nil, fmt.Errorf("%s: %w", path, repo.ErrNotFound)
			}
			return body, err
		}
		// Rules in force that are broken (written before pushes were
		// checked for them) check nothing, rather than refuse every
		// push, the one mending them included.
		if check, err := c.schemas(read); err == nil {
			c.ruledBy = check
		}
	}
	return nil
}

// lastValidPolicy is the policy in force while rev's is broken (see
// store.LastValidPolicy): the walk is rev's first-parent history.
func (c *checker) lastValidPolicy(rev string) (*policy.Policy, error) {
	return store.LastValidPolicy(func(yield func(store.Files, error) bool) {
		for i := 0; ; i++ {
			at := fmt.Sprintf("%s~%d", rev, i)
			if _, _, err := c.cat.read(at + "^{commit}"); errors.Is(err, errMissing) {
				return // the start of history
			} else if err != nil {
				yield(nil, err)
				return
			}
			if !yield(commitFiles{c: c, commit: at}, nil) {
				return
			}
		}
	})
}

// checkSchemaFiles compiles, in a commit that changes the schema rules or
// a schema, every schema the rules name: a schema that does not compile
// (or a $ref that leaves the store) would otherwise be in force once the
// push lands, and refuse every push after it.
func (c *checker) checkSchemaFiles(ref, h, agent string, changes []change) error {
	touched := false
	for _, ch := range changes {
		touched = touched || ch.path == docschema.Path || strings.HasPrefix(ch.path, docschema.Dir+"/")
	}
	if !touched {
		return nil
	}
	files := commitFiles{c: c, commit: h}
	body, err := files.ReadFile(docschema.Path)
	if err != nil {
		return nil // no rules: the schemas rule nothing
	}
	rules, err := docschema.Parse(body)
	if err != nil {
		return nil // checkContent names it, on the rules' own path
	}
	for _, r := range rules.Rules {
		if _, err := docschema.Compile(r.Schema, files.ReadFile); err != nil {
			if e := c.add(Violation{Ref: ref, Commit: h, Agent: agent, Path: r.Schema, Rule: RuleSchema, Detail: err.Error()}); e != nil {
				return e
			}
		}
	}
	return nil
}

// checkClashes refuses a commit that leaves, beside a path it writes, a
// name of the same directory that differs from one of the path's own only
// in case or Unicode normalization ("café" in NFC and in NFD): a checkout
// on macOS or Windows merges the two, and one file is lost. The store's
// own writes refuse them (repo's checkNewName); this holds plain git to
// the same. A pair both already in the first parent is not this commit's.
func (c *checker) checkClashes(ref, h, agent string, cm *repo.Commit, changes []change) error {
	folded := map[string]map[string][]string{} // tree → fold key → names
	done := map[string]bool{}                  // paths whose name is checked
	var parentTree string
	if len(cm.Parents) > 0 {
		p, err := c.readCommit(cm.Parents[0].String())
		if err != nil {
			return err
		}
		parentTree = p.Tree.String()
	}
	for _, ch := range changes {
		if ch.deleted() {
			continue
		}
		// A path checkPath refuses is named there; its directories are
		// not walked (diff already stopped at the store's depth).
		if rule, _, _ := c.checkPath(ch); rule != "" {
			continue
		}
		// The trees along the path, from the commit's root: each is read
		// once (readTree caches them), never looked up by name from the
		// root again at every depth.
		tree, dir := cm.Tree.String(), ""
		for seg := range strings.SplitSeq(ch.path, "/") {
			p := joinPath(dir, seg)
			es, err := c.treeAt(tree, dir)
			if err != nil {
				return err
			}
			if !done[p] {
				done[p] = true
				keys, ok := folded[tree]
				if !ok {
					keys = map[string][]string{}
					for _, e := range es {
						k := verbiage.FoldName(e.name)
						keys[k] = append(keys[k], e.name)
					}
					folded[tree] = keys
				}
				for _, other := range keys[verbiage.FoldName(seg)] {
					if other == seg || !verbiage.SameOnCheckout(other, seg) {
						continue
					}
					if parentTree != "" {
						mine, err := c.entryAt(parentTree, p)
						if err != nil {
							return err
						}
						theirs, err := c.entryAt(parentTree, joinPath(dir, other))
						if err != nil {
							return err
						}
						if mine.hash != "" && theirs.hash != "" {
							continue
						}
					}
					detail := fmt.Sprintf("%q and %q differ only in case or Unicode normalization (NFC/NFD): macOS and Windows checkouts would merge them", joinPath(dir, other), p)
					if e := c.add(Violation{Ref: ref, Commit: h, Agent: agent, Path: p, Rule: RuleStorePath, Detail: detail}); e != nil {
						return e
					}
					break
				}
			}
			e := find(es, seg)
			if e == nil || !e.isDir() {
				break
			}
			tree, dir = e.hash, p
		}
	}
	return nil
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// checkRuled validates the verbiage-ruled documents a commit touches, as
// the store's own writes do (store.CheckRuledDocuments): against the
// commit's first parent, the rules in the commit's own tree.
func (c *checker) checkRuled(ref, h, agent string, cm *repo.Commit, changes []change) error {
	changed := make([]string, 0, len(changes))
	for _, ch := range changes {
		changed = append(changed, ch.path)
	}
	var before store.Tree
	if len(cm.Parents) > 0 {
		before = commitFiles{c: c, commit: cm.Parents[0].String()}
	}
	vs, err := store.CheckRuledDocuments(commitFiles{c: c, commit: h}, before, changed)
	if err != nil {
		return err
	}
	for _, v := range vs {
		if e := c.add(Violation{Ref: ref, Commit: h, Agent: agent, Path: v.Path, Rule: RuleVerbiage, Detail: v.Err.Error()}); e != nil {
			return e
		}
	}
	return nil
}

// checkEvents holds the events a commit writes to the rule the store's
// own writes meet (event.CheckWrite): an event already emitted is never
// rewritten, and a new one's source is the commit's author unless a
// merge brings it as another parent holds it. Removing one is allowed.
func (c *checker) checkEvents(ref, h string, cm *repo.Commit, changes []change) error {
	var parent store.Files
	var others []store.Files
	for i, p := range cm.Parents {
		f := commitFiles{c: c, commit: p.String()}
		if i == 0 {
			parent = f
		} else {
			others = append(others, f)
		}
	}
	for _, ch := range changes {
		if ch.deleted() || !strings.HasPrefix(ch.path, event.Dir+"/") {
			continue
		}
		_, body, err := c.cat.read(ch.entry.hash)
		if err != nil {
			return err
		}
		if event.CheckFile(ch.path, body) != nil {
			continue // not an event at all: the per-file check names it
		}
		if err := event.CheckWrite(ch.path, body, cm.Author.Name, parent, others); err != nil {
			if e := c.add(Violation{Ref: ref, Commit: h, Agent: cm.Author.Name, Path: ch.path, Rule: store.RuleRecord, Detail: err.Error()}); e != nil {
				return e
			}
		}
	}
	return nil
}

// commitFiles reads files of one pushed commit, for statedoc.
type commitFiles struct {
	c      *checker
	commit string
}

// ReadDir lists a directory of the commit's tree ("" is the root).
func (f commitFiles) ReadDir(dir string) ([]repo.DirEntry, error) {
	_, body, err := f.c.cat.read(f.commit + ":" + dir)
	if errors.Is(err, errMissing) {
		return nil, fmt.Errorf("%s: %w", dir, repo.ErrNotFound)
	} else if err != nil {
		return nil, err
	}
	es, err := parseTree(body)
	if err != nil {
		return nil, err
	}
	out := make([]repo.DirEntry, 0, len(es))
	for _, e := range es {
		out = append(out, repo.DirEntry{Name: e.name, IsDir: e.isDir()})
	}
	return out, nil
}

func (f commitFiles) ReadFile(path string) ([]byte, error) {
	_, body, err := f.c.cat.read(f.commit + ":" + path)
	if errors.Is(err, errMissing) {
		return nil, fmt.Errorf("%s: %w", path, objects.ErrNotFound)
	}
	return body, err
}

func (c *checker) result() error {
	if len(c.violations) == 0 {
		return nil
	}
	return &RefusedError{Violations: c.violations}
}

func (c *checker) add(v Violation) error {
	c.violations = append(c.violations, v)
	if len(c.violations) >= c.max {
		return errEnough
	}
	return nil
}

func (c *checker) revList(ctx context.Context, args ...string) ([]string, error) {
	if out, ok, err := c.commitsHere(args); ok {
		return out, err
	}
	full := append([]string{"--git-dir", c.gitDir, "rev-list", "--reverse", "--topo-order"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = gitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git rev-list: %s: %w", strings.TrimSpace(stderr.String()), err)
	}
	return strings.Fields(string(out)), nil
}

func (c *checker) checkCommits(ctx context.Context, ref string, commits []string) error {
	for _, h := range commits {
		if c.seen[h] {
			continue
		}
		c.seen[h] = true
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.checkCommit(ref, h); err != nil {
			if errors.Is(err, errEnough) {
				return nil
			}
			return err
		}
	}
	return nil
}

func (c *checker) readCommit(h string) (*repo.Commit, error) {
	cm, _, err := c.readCommitBody(h)
	return cm, err
}

// readCommitBody is readCommit and the commit's raw body, which its
// signature signs.
func (c *checker) readCommitBody(h string) (*repo.Commit, []byte, error) {
	typ, body, err := c.cat.read(h)
	if err != nil {
		return nil, nil, err
	}
	if typ != "commit" {
		return nil, nil, fmt.Errorf("%s is a %s, not a commit", h, typ)
	}
	cm, err := repo.ParseCommit(plumbing.NewHash(h), body)
	return cm, body, err
}

func (c *checker) checkCommit(ref, h string) error {
	cm, body, err := c.readCommitBody(h)
	if err != nil {
		return err
	}
	agent := cm.Author.Name
	v := Violation{Ref: ref, Commit: h, Agent: agent}
	// A commit read differently by git and by these checks, or one that
	// costs a check far more than any the store writes, is refused before
	// anything else is read of it.
	if err := repo.CheckCommitHeaders(body); err != nil {
		v.Rule, v.Detail = RuleCommitFormat, strings.TrimPrefix(err.Error(), repo.ErrMalformedObject.Error()+": ")
		return c.add(v)
	}
	if len(cm.Parents) > MaxParents {
		v.Rule, v.Detail = RuleCommitFormat, fmt.Sprintf("a merge of %d parents: a pushed commit has at most %d", len(cm.Parents), MaxParents)
		return c.add(v)
	}
	if c.policy.SignatureRequired(agent) {
		if v.Detail, err = c.checkSignature(h, agent, body); err != nil {
			return err
		}
		if v.Detail != "" {
			v.Rule = RuleSigned
			if err := c.add(v); err != nil {
				return err
			}
		}
	}
	changes, err := c.changes(cm)
	var shape *shapeError
	if errors.As(err, &shape) {
		v.Path, v.Rule, v.Detail = shape.path, RuleStorePath, shape.detail
		return c.add(v)
	} else if err != nil {
		return err
	}
	if over, err := c.checkSizes(ref, h, agent, changes); err != nil || over {
		return err
	}
	if err := c.checkRuled(ref, h, agent, cm, changes); err != nil {
		return err
	}
	if err := c.checkIdentity(ref, h, cm); err != nil {
		return err
	}
	if err := c.checkLeases(ref, h, cm, changes); err != nil {
		return err
	}
	if err := c.checkEvents(ref, h, cm, changes); err != nil {
		return err
	}
	if err := c.checkSchemaFiles(ref, h, agent, changes); err != nil {
		return err
	}
	if err := c.checkClashes(ref, h, agent, cm, changes); err != nil {
		return err
	}
	for _, ch := range changes {
		v := Violation{Ref: ref, Commit: h, Agent: agent, Path: ch.path}
		for _, check := range []func(change) (string, string, error){c.checkPath, c.checkContent, c.checkPolicy} {
			rule, detail, err := check(ch)
			if err != nil {
				return err
			}
			if rule != "" {
				v.Rule, v.Detail = rule, detail
				if err := c.add(v); err != nil {
					return err
				}
				break // one violation per path is enough to act on
			}
		}
	}
	return nil
}

// change is a path a commit wrote: entry is the new one, zero when the
// commit deleted the path.
type change struct {
	path  string
	entry treeEntry
	agent string
	merge bool // the merger's write in a merge commit
}

func (ch change) deleted() bool { return ch.entry.hash == "" }

func (c *checker) checkPath(ch change) (string, string, error) {
	if ch.deleted() {
		return "", "", nil
	}
	clean, err := verbiage.CleanStorePath(ch.path)
	if err != nil {
		return RuleStorePath, err.Error(), nil
	}
	if clean != ch.path {
		return RuleStorePath, fmt.Sprintf("the path is not in its canonical spelling %q", clean), nil
	}
	switch ch.entry.mode {
	case "100644", "100755":
	default:
		return RuleStorePath, fmt.Sprintf("a store holds regular files only (mode %s)", ch.entry.mode), nil
	}
	return "", "", nil
}

func (c *checker) checkContent(ch change) (string, string, error) {
	if ch.deleted() {
		return "", "", nil
	}
	if !strings.HasSuffix(ch.path, ".json") {
		if c.validate != nil {
			// A path no file of any kind may take (Validate's nil body).
			if rule, detail := c.validate(ch.path, nil); rule != "" {
				return rule, detail, nil
			}
		}
		if c.ruledBy == nil {
			return "", "", nil
		}
		// A schema may rule a path of any name.
		_, body, err := c.cat.read(ch.entry.hash)
		if err != nil {
			return "", "", err
		}
		rule, detail := c.ruledBy(ch.path, body)
		return rule, detail, nil
	}
	// Its size is within the limits: checkSizes came first.
	_, body, err := c.cat.read(ch.entry.hash)
	if err != nil {
		return "", "", err
	}
	canon, err := objects.Canonical(body)
	if err != nil {
		return RuleCanonicalJSON, err.Error(), nil
	}
	if !bytes.Equal(canon, body) {
		return RuleCanonicalJSON, "not canonical JSON (keys sorted, two-space indent, final newline): write documents with aiwg-state", nil
	}
	if c.validate != nil {
		if rule, detail := c.validate(ch.path, body); rule != "" {
			return rule, detail, nil
		}
	}
	if c.ruledBy != nil {
		if rule, detail := c.ruledBy(ch.path, body); rule != "" {
			return rule, detail, nil
		}
	}
	switch ch.path {
	case docschema.Path:
		// Broken rules in force would make the hook refuse every push,
		// the one mending them too.
		if _, err := docschema.Parse(body); err != nil {
			return RuleSchema, err.Error(), nil
		}
	case policy.Path:
		// So would a broken policy, and every local write after a pull.
		if _, err := policy.Parse(body); err != nil {
			return RuleSettings, err.Error() + " (write it with aiwg-state policy set, which checks it)", nil
		}
	}
	return "", "", nil
}

func (c *checker) checkPolicy(ch change) (string, string, error) {
	if c.badPolicy != "" && ch.path != policy.Path {
		return RulePolicy, c.badPolicy + "; until a push repairs it (commits that change " + policy.Path + " alone, e.g. aiwg-state policy set), no other write is accepted", nil
	}
	d := c.policy.Decide(ch.agent, ch.path)
	if d.Allowed {
		return "", "", nil
	}
	detail := d.Rule + ": this agent may not write this path"
	if ch.merge {
		detail += " (a merge writes every path it does not take from a change another parent made since the merge base)"
	}
	return RulePolicy, detail, nil
}
