package sqlstate

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/aiwg/aiwg-state/objects"
)

// insertFunc adds one row to a table; the arguments are its columns in
// the order the table declares them.
type insertFunc func(table string, args ...any) error

// mirrorFile adds the rows a file of the store gives: its documents rows,
// and a row of memory, variables, trajectories, iterations, leases or
// queues where the file's place says it is one. A file that is not what
// its place asks is listed in index_problems, never guessed at.
func mirrorFile(path string, data []byte, ins insertFunc) error {
	if !strings.HasSuffix(path, ".json") {
		if !utf8.Valid(data) {
			return ins("documents", path, "", nil, "binary")
		}
		s, _ := json.Marshal(string(data))
		return ins("documents", path, "", string(s), "text")
	}
	doc, err := objects.Decode(data)
	if err != nil {
		if err := ins("index_problems", path, "not JSON: "+err.Error()); err != nil {
			return err
		}
		s, _ := json.Marshal(string(data))
		return ins("documents", path, "", string(s), "text")
	}
	if err := ins("documents", path, "", compact(data), jsonType(doc)); err != nil {
		return err
	}
	for _, m := range objects.Leaves(doc) {
		if len(m.Path) == 0 {
			continue // a scalar document: its one row is above
		}
		if err := ins("documents", path, m.Path.String(), encode(m.Value), jsonType(m.Value)); err != nil {
			return err
		}
	}
	obj, _ := doc.(map[string]any)
	seg := strings.Split(strings.TrimSuffix(path, ".json"), "/")
	bad := func(what string) error { return ins("index_problems", path, what) }
	switch {
	case seg[0] == "memory" && len(seg) != 4:
		return bad("not where a memory record is kept (memory/NAMESPACE/KIND/ID.json)")
	case seg[0] == "memory" && len(seg) == 4:
		if obj == nil {
			return bad("a memory record is a JSON object")
		}
		return ins("memory", str(obj, "namespace", seg[1]), str(obj, "record_kind", seg[2]), str(obj, "record_id", seg[3]),
			encode(obj["payload"]), str(obj, "created_at", ""), str(obj, "updated_at", ""), nullable(str(obj, "expires_at", "")), path)
	case seg[0] == "queues" && len(seg) >= 3:
		if obj == nil {
			return bad("a queue message is a JSON object")
		}
		return ins("queues", str(obj, "queue", strings.Join(seg[1:len(seg)-1], "/")), num(obj, "seq"), str(obj, "id", ""),
			str(obj, "producer", ""), str(obj, "enqueued_at", ""), encode(obj["payload"]), path)
	case seg[0] == "leases" && len(seg) >= 2:
		if obj == nil {
			return bad("a lease record is a JSON object")
		}
		resource := str(obj, "resource", strings.Join(seg[1:], "/"))
		locks, _ := obj["locks"].([]any)
		for _, l := range locks {
			lk, _ := l.(map[string]any)
			if lk == nil {
				continue
			}
			if err := ins("leases", resource, str(lk, "holder", ""), str(lk, "id", ""), str(lk, "type", ""),
				str(lk, "acquiredAt", ""), str(lk, "expiresAt", ""), num(lk, "ttl"), path); err != nil {
				return err
			}
		}
		return nil
	case seg[0] == "trajectories" && len(seg) == 3 && seg[2] == "trajectory":
		if obj == nil {
			return bad("a trajectory is a JSON object")
		}
		md, _ := obj["metadata"].(map[string]any)
		tc, _ := obj["task_context"].(map[string]any)
		oc, _ := obj["outcome"].(map[string]any)
		return ins("trajectories", str(obj, "trajectory_id", seg[1]), str(tc, "task_type", ""), str(tc, "task_id", ""),
			str(tc, "task_prompt", ""), nullable(str(oc, "status", "")), nullable(str(md, "started_at", "")),
			nullable(str(md, "completed_at", "")), num(md, "total_iterations"), num(md, "total_tokens"),
			num(md, "total_cost_usd"), num(md, "total_duration_ms"), compact(data), path)
	case seg[0] == "trajectories" && len(seg) == 4 && seg[2] == "iterations":
		if obj == nil {
			return bad("an iteration is a JSON object")
		}
		th, _ := obj["thought"].(map[string]any)
		ac, _ := obj["action"].(map[string]any)
		ob, _ := obj["observation"].(map[string]any)
		co, _ := obj["cost"].(map[string]any)
		return ins("iterations", seg[1], num(obj, "iteration_number"), str(th, "type", ""), nullable(str(ac, "tool", "")),
			nullable(str(ob, "status", "")), num(co, "input_tokens"), num(co, "output_tokens"), num(co, "total_tokens"),
			num(co, "total_cost_usd"), str(obj, "timestamp", ""), compact(data), path)
	}
	if scope, owner, ok := variableScope(seg); ok {
		if obj == nil {
			return bad("a variable is a JSON object")
		}
		return ins("variables", owner, scope, str(obj, "name", seg[len(seg)-1]), str(obj, "type", ""),
			encode(obj["value"]), str(obj, "updated_at", ""), path)
	}
	return nil
}

// variableScope tells where RLM state keeps variables: a state's own
// (states/ID/variables), temporary (temp/ID/variables), a task tree's
// (trees/ID/variables), a session's (sessions/ID/variables) and global
// (global/variables).
func variableScope(seg []string) (scope string, owner any, ok bool) {
	switch {
	case len(seg) == 3 && seg[0] == "global" && seg[1] == "variables":
		return "global", nil, true
	case len(seg) == 4 && seg[2] == "variables":
		switch seg[0] {
		case "states":
			return "state", seg[1], true
		case "temp":
			return "temporary", seg[1], true
		case "trees":
			return "tree", seg[1], true
		case "sessions":
			return "session", seg[1], true
		}
	}
	return "", nil, false
}

// jsonType names a decoded value's JSON type as SQLite's json_type does.
func jsonType(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "text"
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return "real"
		}
		return "integer"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case nil:
		return "null"
	}
	return "null"
}

// encode is v's canonical JSON text on one line (sorted keys, as in
// the store, without its indentation).
func encode(v any) string {
	b, err := objects.Encode(v)
	if err != nil {
		return "null"
	}
	return compact(b)
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return strings.TrimSpace(string(b))
	}
	return buf.String()
}

// str is obj[key] when it is a string, else def.
func str(obj map[string]any, key, def string) string {
	if s, ok := obj[key].(string); ok {
		return s
	}
	return def
}

// num is obj[key] as an int64 or float64 when it is a number, else NULL.
func num(obj map[string]any, key string) any {
	n, ok := obj[key].(json.Number)
	if !ok {
		return nil
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	if f, err := n.Float64(); err == nil {
		return f
	}
	return nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
