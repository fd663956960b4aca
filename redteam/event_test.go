package redteam

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/event"
)

// eventPolicy lets each worker emit events as itself alone: its own
// directory under events/.
const eventPolicy = `{
  "roles": {"coordinator": ["conductor"], "workers": ["alice", "bob", "mallory"]},
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "own events", "roles": ["workers"], "paths": ["events/{agent}/**"]}
  ]
}`

// TestForgedEventsAreRefused: mallory emits as herself and pushes; an
// event she writes as alice, well formed, is refused by the server (the
// policy's events/{agent}/**) and in-process (the event guard), and
// nothing moves.
func TestForgedEventsAreRefused(t *testing.T) {
	s := newServer(t, eventPolicy)
	st := agentStore(t, s.Daemon, "mallory")
	runIn(t, st, "", "event", "emit", "task.completed", "--agent", "mallory")
	runIn(t, st, "", "push")
	fsck(t, s.Dir)

	forged, err := event.New(event.Input{Type: "handoff.accepted", Payload: []byte(`{"approved":true}`)}, "evt-0000beef", "alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := forged.Encode()
	w := cloneAs(t, s.Daemon)
	commitFile(t, w, forged.File(), string(body), "-c", "user.name=mallory")
	refused(t, s, w, s.Daemon, "HEAD:refs/heads/main", "may not write this path")

	r := try(st, string(body), "put", forged.File(), "-", "--agent", "mallory")
	// The policy answers first; without one, the event guard does
	// (package event's tests).
	if r.Code != 3 || !strings.Contains(r.Stderr, "may not write events/alice/") {
		t.Fatalf("put of a forged event in-process: exit %d, %s", r.Code, r.Stderr)
	}
	var es []event.Event
	if err := json.Unmarshal([]byte(runIn(t, st, "", "event", "ls", "--json")), &es); err != nil || len(es) != 1 || es[0].Source != "mallory" {
		t.Fatalf("events after the attack: %+v %v", es, err)
	}
}

// TestEventsAreNeverRewrittenThroughTheServer: with the policy letting each
// agent write its own events/ directory, mallory rewrites an event she
// emitted, and under an open policy emits one as alice; the server holds
// both pushes to the event guard's rule and refuses them.
func TestEventsAreNeverRewrittenThroughTheServer(t *testing.T) {
	s := newServer(t, eventPolicy)
	st := agentStore(t, s.Daemon, "mallory")
	runIn(t, st, "", "event", "emit", "task.created", "--agent", "mallory")
	runIn(t, st, "", "push")
	var es []event.Event
	if err := json.Unmarshal([]byte(runIn(t, st, "", "event", "ls", "--json")), &es); err != nil || len(es) != 1 {
		t.Fatalf("events: %+v %v", es, err)
	}
	w := cloneAs(t, s.Daemon)
	rewritten := es[0]
	rewritten.Type, rewritten.Payload = "task.completed", []byte(`{"forged":true}`)
	body, err := rewritten.Encode()
	if err != nil {
		t.Fatal(err)
	}
	commitFile(t, w, es[0].File(), string(body), "-c", "user.name=mallory")
	refused(t, s, w, s.Daemon, "HEAD:refs/heads/main", "never rewritten")

	open := newServer(t, openPolicy)
	forged, err := event.New(event.Input{Type: "handoff.accepted"}, "evt-0000beef", "alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	body, _ = forged.Encode()
	w = cloneAs(t, open.Daemon)
	commitFile(t, w, forged.File(), string(body), "-c", "user.name=mallory")
	refused(t, open, w, open.Daemon, "HEAD:refs/heads/main", `cannot emit an event as "alice"`)
}
