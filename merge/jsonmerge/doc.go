// Package jsonmerge merges agent state three ways, key by key, and settles what
// both sides changed with the resolver strategies of the swarm shared state specification.
//
// This part of the package works on decoded JSON values (the encoding/json
// UseNumber form: map[string]any, []any, string, json.Number, bool, nil) and
// knows nothing of git or files.
//
// # Three-way, per key
//
// Values compares each side with the base at every path. A path changed on
// one side only takes that side's value; changed the same way on both takes
// that value; objects on both sides are merged key by key (additions,
// deletions and changes of different keys all survive). What is left is a
// clash: both sides changed a leaf or an array differently, changed its type,
// or one deleted what the other changed. The strategy in force at the path
// settles it: Options.Strategy, overridden for a key's subtree by
// Options.Keys. Numbers are compared by their literal, as the stored bytes
// are: 1 and 1.0 differ.
//
// # Strategies
//
// last-write-wins and first-write-wins order the two writes by, in turn:
//
//  1. the time the data carries: an RFC 3339 updated_at (or UPDATED-AT,
//     updatedAt, lastModified) field of the nearest enclosing object that
//     has one on either side, used only when both sides have it there;
//  2. the sides' hybrid logical clocks (Side.Clock): wall time, logical
//     counter, then agent id in byte order;
//  3. the canonical bytes of the two values (compact JSON, keys sorted), a
//     deletion before any value.
//
// The later write wins for last-write-wins, the earlier for
// first-write-wins. A deletion is a write like any other: it has no time
// field of its own, so it is ordered by the enclosing object's time when
// both sides have one there, else by its side's clock. Which side is "ours"
// never matters.
//
// merge-objects is the key-wise merge itself; a clash it cannot settle goes
// to Options.Fallback (default: a conflict). Arrays both sides only
// appended to (the base array, absent counting as empty, a prefix of each
// side's) are not a clash: they merge as merge-arrays merges them, so two
// agents appending (items.-) keep both their elements.
//
// merge-arrays merges two arrays: base order is kept, elements either side
// removed are removed, elements on both sides are merged recursively, and
// the elements new on either side follow the base elements. An object
// element is identified by its "id", else "ID", else the first key in byte
// order ending in "_id" or "-ID" (a string or number); any other element by
// its canonical bytes; repeated identities pair up in order. New elements
// keep each side's own order; the side with the older clock goes first and
// an element of the other side moves ahead only when both elements carry a
// creation time (created_at, CREATED-AT, timestamp, ts: RFC 3339 or a
// number) and it is earlier. An append-only log (EVENTS, iterations) thus
// keeps both sides' entries in time order. Reordering an array is not a
// change merge-arrays keeps when the other side changed the array too.
// Anything but arrays on both sides goes to the fallback.
//
// higher-priority-wins compares the priority (or PRIORITY) field of the
// nearest enclosing object that has one on either side: numbers
// numerically, names in the order critical > urgent > high > medium = normal
// > low > background (case-insensitive). A tie, a missing or unknown
// priority, or a number against a name falls back to last-write-wins.
//
// max keeps the larger number, true over false, or the larger string by
// byte order; numbers equal in value but spelled differently keep the larger
// spelling by byte order. Any other pair (a deletion, null, objects, arrays,
// different types) is a conflict.
//
// sum adds both sides' changes to a number, base + (ours - base) +
// (theirs - base) in exact decimal arithmetic, an absent base counting as
// 0: counters keep every side's increments. It is the one strategy that
// applies when both sides made the same change (each added one: the sum
// adds two), so a merge with sum is not idempotent, and the result may be
// a number neither side wrote. With one side unchanged, the other side's
// number is kept as written. Anything else is a conflict.
//
// conflict (Manual) settles nothing.
//
// # Conflicts
//
// An unsettled clash is returned as a Conflict carrying the base, ours and
// theirs values at its path, and the result holds ours' value there so it
// stays a complete JSON document. In an array an element cannot be left
// out, so when ours deleted an element theirs changed, the result keeps
// theirs' element until the conflict is resolved.
//
// # Symmetry
//
// Swapping ours and theirs (values and clocks) gives the same result and the
// same conflicts with ours and theirs swapped. The one exception is the
// value left at a conflicted object key, which is ours'.
//
// # Clocks
//
// Clock is a hybrid logical clock written into commit trailers as
// WALL.LOGICAL@AGENT; Tick stamps a local write, Observe a merged one.
//
// # Files and trees
//
// MergeFile merges three copies of one file (bytes): .json documents key by
// key with Values, written back canonical; any other file changed
// differently on both sides is a whole-file conflict. Trees merges the
// paths that changed on either side of two trees, named by opaque content
// ids, loading only what both sides changed. ParseAttributes reads the
// strategy of each path from a .gitattributes file (merge=aiwg-STRATEGY,
// plus aiwg-fallback= and aiwg-keys=), git's matching rules included.
// Driver is the same file merge as git's merge driver runs it, and Record
// is what is left to resolve, stored as JSON data rather than markers. None
// of it knows git: the store and the CLI supply the bytes.
package jsonmerge
