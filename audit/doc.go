// Package audit answers who changed what, when: the per-key history and
// blame of a store's documents, fast on long histories.
//
// It keeps an index beside the repository (under <gitdir>/aiwg/index),
// outside the versioned tree: for every commit, the files it changed
// against its first parent (with their new blobs, so reading a document's
// version at any commit costs no tree reads) and, inside JSON documents,
// the key paths whose value changed. The index is two kinds of file:
//
//   - log.<gen>: append-only records, one per commit, each framed by a magic
//     number, a length and a CRC-32. Writers append under an flock on the
//     lock file; a record torn by a crash or a SIGKILL fails its checksum and
//     readers skip to the next frame, so the worst a crash does is forget a
//     commit, which is then indexed again on first use.
//   - snapshot: every commit of earlier logs in a compact, read-only form
//     (commit table in topological order, hash index, key dictionary with
//     posting lists, mutation-id index), written to a temporary file and
//     renamed, and checked against its CRC when read. Readers fold the log
//     into a new snapshot (generation gen+1) once it grows past a threshold.
//
// Queries cost in proportion to the changes of the key asked about: a key's
// posting list names the commits that changed it, newest last, and whether
// a commit lies on the first-parent chain of another is answered in
// O(log n) with jump pointers, never by walking history. Commits the index
// does not know (made by plain git, fetched) are indexed when a query meets
// them, by comparing trees with repo.DiffTrees, which skips equal subtrees.
//
// A key path "changed" in a commit when its value there (the whole subtree,
// or its absence) differs from its value in the first parent. Paths are
// positions: inserting at the front of an array changes every index after
// it. Blame --lines follows text lines through insertions instead.
package audit
