// Package hooks holds the git hooks a store installs: the server-side
// pre-receive hook that checks every pushed commit before the server takes
// it.
//
// git runs no hooks for go-git, and git hosts' merge buttons run no custom
// code: the one place every write to a shared store passes through is the
// git server that receives it. `aiwg-state hooks install --server DIR`
// writes DIR/hooks/pre-receive, whose first line has the kernel start
// aiwg-state itself (see DirectArg; a binary path that line cannot carry
// gets a shell script that runs `aiwg-state hooks run pre-receive`, as
// installs before did); git feeds it the ref updates of the
// push and refuses the whole push when it exits non-zero, leaving every ref
// of the server as it was.
//
// # What is checked
//
// Every commit the push brings that the server does not have yet (git
// rev-list NEW --not --all), in the order they were made, on every path the
// commit changed. For a merge, a path is the merger's write unless the
// merge took it cleanly (policy.TakenByMerge): a change another parent
// made since the merge base (git merge-base --all) is that parent's
// authors', judged on their commits, which are on the server already or in
// the push; an entry older than the base brought back by an old parent, a
// parent's change thrown away, a hand edit or a deletion is the merger's
// own, so a merge can neither roll a file back nor remove the policy
// unless its author may write that path:
//
//   - commit-format: the commit has one author and one committer and no
//     encoding header (repo.CheckCommitHeaders), so git and aiwg-state
//     credit the same agent, and at most MaxParents parents;
//   - store-path: every tree the commit brings is one git reads as this
//     package does (parseTree: strictly in git's order, no name twice, the
//     modes git writes), the path is one aiwg-state could have written
//     (verbiage.CleanStorePath: its length and depth are checked as the
//     trees are walked, before anything below is read), and a regular
//     file (no symlink, no submodule, an entry naming a blob);
//   - limit: every file is within the store's limits.max_document_bytes
//     whatever its name, as the store's own writes hold it (the settings,
//     .aiwg/ and .gitattributes, within the larger of that and 10 MiB);
//     sizes are asked of git (cat-file --batch-check) before any file is
//     read;
//   - canonical-json: a .json file is canonical JSON (objects.Canonical),
//     so no conflict markers or hand edits that would break readers;
//   - policy: the commit's author (the agent) may write the path, by the
//     access policy (package policy);
//   - signed: when the policy requires the commit's author to sign
//     (require_signed), the commit carries a signature that verifies: an
//     SSH signature is checked in-process against the keys the policy's
//     "signers" list for the author (another agent's key, an unlisted
//     key, or a commit changed after signing is refused); an OpenPGP or
//     X.509 signature is refused while the policy lists signers; without
//     them, a signature must pass `git verify-commit` with the server's own
//     keys, and git's principal (or the key's user id) must name the author;
//   - lease: a lease record (leases/**.json) stays one, and does not
//     remove, change or forge another agent's live lease or wait unless the
//     commit's agent (or the pusher) has the policy's lease_admin role; a
//     merge's own write is judged against its merge bases too, as a
//     three-way merge of the record (lease.Foreign);
//   - identity: when the policy names pushers, the commit's author and
//     committer are agents the authenticated pusher may act as; and per
//     branch, bringing other agents' commits the default branch lacks onto
//     it (a merge, a fast-forward) needs the pusher's integrator role (rule
//     integrator).
//
// And per ref: only branches and tags are taken (rule ref); a merge in
// progress (refs/aiwg/merge/*, where aiwg-state keeps unresolved
// conflicts as data) is refused (rule conflicts): conflicts are resolved
// before they are shared, and a branch itself never holds them.
//
// Who pushes is what the server says (Pusher): the variable the
// repository's git config aiwg.pusherVariable names, else REMOTE_USER (git
// http-backend behind HTTP authentication), else GL_USER (gitolite). A
// policy that names pushers refuses a push whose pusher is unknown, unless
// it sets "require_pusher": false. Agent branches are owned (rule
// namespace): refs/heads/agents/<id>/* (and agents/<id>, which would shut
// id out of it) is created, moved or deleted only by a pusher that may act
// as id (or an integrator); when no pusher is authenticated, every commit
// a push brings to it must be authored by id.
//
// The policy and limits in force are those of the server's default branch
// before the push, so a push cannot grant itself rights by editing
// .aiwg/policy.json (the edit is itself a write the old policy must allow).
// The default branch is the branch HEAD names when it has a commit, else
// main: one branch both holds the policy and is protected as the default
// (it moves only along its first-parent history). hooks install points an
// unborn HEAD (git init --bare names master) at main, and a push may not
// give HEAD's unborn branch its first commit once another branch exists,
// so a branch that never held the policy never becomes the default. A
// server with no branch yet takes any first push.
//
// A new tag is a checkpoint as aiwg-state writes it (package checkpoint):
// refs/tags/checkpoints/<state>/<name>, an annotated tag object of that
// name on a commit, with the headers object, type, tag and tagger once
// each and the checkpoint's trailers; its tagger is held to the identity
// and signed rules as a commit's author is, and a state has at most
// checkpoint.MaxPerState on the server (rule limit). Or it is a snapshot
// (package snapshot): refs/tags/snapshots/<name>, an annotated tag of that
// name on a commit whose message is a snapshot's (its id, reason, and
// scope, each path of which the commit has), its tagger held to the same
// rules, at most snapshot.MaxSnapshots on the server. A time-to-live file
// (.aiwg/ttl/…) is checked as the store's write guard checks it
// (store.CheckTTLFile, rule ttl), and the policy judges it as the
// document it is about.
//
// Ref names mean one ref: no branch or tag is named HEAD or refs/…, and
// a push does not create a branch and a tag of one name.
//
// A refusal names the ref, the commit, the agent, the path and the rule, one
// line each, which git shows the pusher as "remote:" lines.
//
// Install also sets receive.fsckObjects on the server, so git refuses
// malformed objects before the hook runs. The hook's check of a push has a
// deadline (git config aiwg.hookTimeout, DefaultTimeout when unset): out
// of time, it refuses the push.
//
// # Reading objects
//
// pre-receive runs before git moves the pushed objects into the repository
// (they sit in a quarantine directory named by the environment), where
// go-git cannot see them. The checker reads objects and refs with package
// repo from the directories that environment names (the quarantine, and
// the repository's objects as its alternate): a push is checked at every
// agent's sync, and a git process started per question costs about as
// much CPU as the check itself. The commits a push brings are those
// only in the quarantine, walked back to the first commits the
// repository has, each shown reached by a branch or tag (walk.go); where
// that is not shown cheaply, `git rev-list` says, as do git merge-base
// for merges and one `git cat-file --batch` process for names only git
// reads exactly (revisions such as main~2) and repositories it reads
// otherwise (a ref namespace, shallow, sha256).
package hooks
