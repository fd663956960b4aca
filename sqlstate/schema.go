package sqlstate

// schemaVersion changes whenever the mirrored tables change shape: an
// index of another version is rebuilt, never migrated (it is derived).
const schemaVersion = "1"

// mirrored are the read-only tables that mirror the store, in the order
// they are created; each file table has a path column, so that a changed
// file's rows are replaced by deleting that path's and reading it again.
var mirrored = []struct{ name, ddl string }{
	{"documents", `CREATE TABLE documents(
		path TEXT NOT NULL, -- the file in the store
		key TEXT NOT NULL,  -- the key path in the document; '' is the whole document
		value TEXT,         -- the JSON value (a file that is not JSON: its text as a JSON string)
		type TEXT NOT NULL  -- object, array, string, number, boolean, null; text for a file that is not JSON
	)`},
	{"mutations", `CREATE TABLE mutations(
		seq INTEGER NOT NULL,  -- order: a newer commit has a larger seq
		commit_id TEXT NOT NULL,
		agent TEXT,
		time TEXT,             -- RFC 3339, UTC
		operation TEXT,        -- create, update, delete, rename...; NULL for a commit made with plain git
		path TEXT,             -- the file the operation changed
		key TEXT,              -- the key path, when the operation named one
		mutation_id TEXT,
		source TEXT,
		correlation TEXT,
		signature TEXT,        -- none, good, bad, unknown-key, unverified...
		subject TEXT,
		parents INTEGER        -- how many parents: 2 or more is a merge
	)`},
	{"memory", `CREATE TABLE memory(
		namespace TEXT, kind TEXT, id TEXT,
		payload TEXT,          -- JSON
		created TEXT, updated TEXT, expires TEXT,
		path TEXT NOT NULL
	)`},
	{"variables", `CREATE TABLE variables(
		state TEXT,            -- the state, session or tree that owns the scope; NULL for global
		scope TEXT, name TEXT, type TEXT,
		value TEXT,            -- JSON
		updated TEXT,
		path TEXT NOT NULL
	)`},
	{"trajectories", `CREATE TABLE trajectories(
		id TEXT, task_type TEXT, task_id TEXT, prompt TEXT, status TEXT,
		started TEXT, completed TEXT,
		iterations INTEGER, tokens INTEGER, cost REAL, duration_ms INTEGER,
		document TEXT,         -- JSON: the header file
		path TEXT NOT NULL
	)`},
	{"iterations", `CREATE TABLE iterations(
		trajectory TEXT, number INTEGER, thought_type TEXT, tool TEXT, status TEXT,
		input_tokens INTEGER, output_tokens INTEGER, tokens INTEGER, cost REAL,
		time TEXT,
		document TEXT,         -- JSON: the iteration file
		path TEXT NOT NULL
	)`},
	{"leases", `CREATE TABLE leases(
		resource TEXT, holder TEXT, lease_id TEXT, type TEXT,
		acquired TEXT, expires TEXT, ttl_ms INTEGER,
		path TEXT NOT NULL
	)`},
	{"queues", `CREATE TABLE queues(
		queue TEXT, seq INTEGER, id TEXT, producer TEXT, enqueued TEXT,
		payload TEXT,          -- JSON
		path TEXT NOT NULL
	)`},
	{"index_problems", `CREATE TABLE index_problems(
		path TEXT NOT NULL,    -- a file the index could not mirror as its place asks
		problem TEXT
	)`},
}

// indexes make the incremental update's deletes by path cheap, and the
// usual joins quick.
var indexes = []string{
	`CREATE INDEX documents_path ON documents(path, key)`,
	`CREATE INDEX mutations_commit ON mutations(commit_id)`,
	`CREATE INDEX mutations_path ON mutations(path)`,
	`CREATE INDEX mutations_agent ON mutations(agent)`,
	`CREATE INDEX memory_path ON memory(path)`,
	`CREATE INDEX variables_path ON variables(path)`,
	`CREATE INDEX trajectories_path ON trajectories(path)`,
	`CREATE INDEX iterations_path ON iterations(path)`,
	`CREATE INDEX leases_path ON leases(path)`,
	`CREATE INDEX queues_path ON queues(path)`,
	`CREATE INDEX index_problems_path ON index_problems(path)`,
}

// fileTables are the mirrored tables whose rows come from files.
var fileTables = []string{"documents", "memory", "variables", "trajectories", "iterations", "leases", "queues", "index_problems"}

// isMirrored reports whether name is one of the tables that mirror the
// store (which no statement may write).
func isMirrored(name string) bool {
	for _, m := range mirrored {
		if equalFold(m.name, name) {
			return true
		}
	}
	return equalFold(name, "meta")
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
