package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/statedoc"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// TestStateDocumentVerbs: every verb of the state document from Go, each
// write one commit with the CLI's subject and a Path trailer per key, the
// reads seeing what the writes left, through a shard.
func TestStateDocumentVerbs(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	doc := st.StateDocument("")
	wo := store.WriteOptions{Agent: "planner"}
	must := func(m *store.Mutation, err error) *store.Mutation {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	key := func(s string) verbiage.Path {
		t.Helper()
		p, err := verbiage.ParsePath(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	get := func(s string) string {
		t.Helper()
		v, err := doc.Get(ctx, key(s), store.ReadOptions{}, false)
		if err != nil {
			t.Fatalf("get %s: %v", s, err)
		}
		return compact(t, v)
	}

	m := must(doc.CreateGoal(ctx, "ship it", "release 1.0", wo))
	if m.Subject != "goal create ship it" || len(m.Changes) != 1 || m.Changes[0].File != "state/state.json" || m.Changes[0].Key != "GOALS.SHIP-IT" {
		t.Fatalf("goal create: %+v", m)
	}
	if _, err := doc.CreateGoal(ctx, "SHIP-IT", "", wo); !errors.Is(err, statedoc.ErrExists) {
		t.Fatalf("a goal twice: %v", err)
	}
	// The sub-goal lives in a shard: its writes go there.
	must(doc.Set(ctx, key("GOALS.SHIP-IT.SUB-GOALS"), "ref file://state/SHIP/SUBS.json {}", wo))
	m = must(doc.CreateSubGoal(ctx, "ship-it", "write docs", "", wo))
	if m.Changes[0].File != "state/SHIP/SUBS.json" || m.Changes[0].Key != "WRITE-DOCS" {
		t.Fatalf("sub-goal in a shard: %+v", m.Changes)
	}
	if f, k, err := doc.Locate(ctx, key("GOALS.SHIP-IT.SUB-GOALS.WRITE-DOCS.STATUS"), store.ReadOptions{}); err != nil || f != "state/SHIP/SUBS.json" || k != "WRITE-DOCS.STATUS" {
		t.Fatalf("locate: %s %s %v", f, k, err)
	}
	must(doc.SetStatus(ctx, "SHIP-IT", "WRITE-DOCS", "blocked", wo))
	must(doc.AddNote(ctx, "SHIP-IT", "", "waiting on review", wo))
	if got := get("GOALS.SHIP-IT.SUB-GOALS.WRITE-DOCS.STATUS") + get("GOALS.SHIP-IT.NOTES"); got != `"blocked"["waiting on review"]` {
		t.Fatalf("status and note: %s", got)
	}

	// Events: an ID and a time are given when missing; latest marks one,
	// then writes nothing and rolls up.
	m = must(doc.AddEvent(ctx, "SHIP-IT", "WRITE-DOCS", statedoc.Event{Type: "reply", Body: "draft ready"}, wo))
	if m.Subject != "event add SHIP-IT/WRITE-DOCS" {
		t.Fatalf("event add subject: %q", m.Subject)
	}
	ev := get("GOALS.SHIP-IT.SUB-GOALS.WRITE-DOCS.EVENTS.0")
	if !strings.Contains(ev, `"ID":"evt-`) || !strings.Contains(ev, `"CREATED-AT":"`+time.Now().UTC().Format("2006-01-02")) {
		t.Fatalf("event defaults: %s", ev)
	}
	b, m, err := doc.Latest(ctx, wo)
	if err != nil || m == nil || b.Event == nil || b.Event.Body != "draft ready" || b.Remaining != 0 {
		t.Fatalf("latest: %+v %v %v", b, m, err)
	}
	b, m, err = doc.Latest(ctx, wo)
	if err != nil || m != nil || b.Event != nil || len(b.Ready) != 1 {
		t.Fatalf("latest with none unseen: %+v %v %v", b, m, err)
	}

	// Requests: one in flight at a time; finishing twice changes nothing.
	must(doc.Request(ctx, "SHIP-IT", "WRITE-DOCS", "draft the README", wo))
	if _, err := doc.Request(ctx, "SHIP-IT", "WRITE-DOCS", "again", wo); !errors.Is(err, statedoc.ErrInFlight) {
		t.Fatalf("a second request in flight: %v", err)
	}
	must(doc.FinishRequest(ctx, "SHIP-IT", "WRITE-DOCS", "answered", wo))
	if _, err := doc.FinishRequest(ctx, "SHIP-IT", "WRITE-DOCS", "answered", wo); !errors.Is(err, store.ErrNoChange) {
		t.Fatalf("finishing twice: %v", err)
	}

	// Items at global and chat scope, the active project.
	item, err := statedoc.ItemPath("alpha/beta")
	if err != nil {
		t.Fatal(err)
	}
	if m := must(doc.SetItem(ctx, statedoc.Scope{}, item, map[string]any{"inner": true}, wo)); m.Subject != "item set ALPHA.BETA" {
		t.Fatalf("item set subject: %q", m.Subject)
	}
	if v, err := doc.Item(ctx, statedoc.Scope{}, item, store.ReadOptions{}); err != nil || compact(t, v) != `{"INNER":true}` {
		t.Fatalf("item: %s %v", v, err)
	}
	must(doc.SelectProject(ctx, "p1", "Website", wo))
	chat := statedoc.Scope{Chat: "c1"}
	must(doc.SetItem(ctx, chat, item, "calm", wo))
	if v, err := doc.Item(ctx, chat, item, store.ReadOptions{}); err != nil || compact(t, v) != `"calm"` {
		t.Fatalf("chat item: %s %v", v, err)
	}
	must(doc.DeleteItem(ctx, statedoc.Scope{}, item, wo))
	if _, err := doc.Item(ctx, statedoc.Scope{}, item, store.ReadOptions{}); !errors.Is(err, objects.ErrNotFound) {
		t.Fatalf("a deleted item: %v", err)
	}

	// Apply validates before it lands; reset keeps the shard's file.
	if _, err := doc.Apply(ctx, []byte(`[{"op":"replace","path":"/GOALS/SHIP-IT/STATUS","value":"done"}]`), wo); err != nil {
		t.Fatal(err)
	}
	if _, err := doc.Apply(ctx, []byte(`{"GOALS": 7}`), wo); !errors.Is(err, statedoc.ErrInvalidState) {
		t.Fatalf("apply of a broken shape: %v", err)
	}
	must(doc.Delete(ctx, key("GOALS.SHIP-IT.NOTES.0"), wo))
	must(doc.Reset(ctx, wo))
	d, err := doc.Load(ctx, store.ReadOptions{})
	if err != nil || d.Path() != doc.Path() || len(d.Files()) != 1 {
		t.Fatalf("load after reset: %v %v", d, err)
	}
	if _, err := st.Get(ctx, "state/SHIP/SUBS.json", "", store.ReadOptions{}); err != nil {
		t.Fatalf("reset dropped the shard's file: %v", err)
	}
	if _, err := doc.Load(ctx, store.ReadOptions{At: "HEAD~1"}); err != nil {
		t.Fatal(err)
	}
	storetest.Fsck(t, st)
}

// TestStateDocumentNamesItsDocument: a handle on a document the manifest
// does not rule is refused; Path names the default document.
func TestStateDocumentNamesItsDocument(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.StateDocument("notes/a.json").CreateGoal(ctx, "g", "", store.WriteOptions{}); !errors.Is(err, store.ErrUsage) {
		t.Fatalf("an unruled document: %v", err)
	}
	if p := st.StateDocument("").Path(); p != statedoc.DefaultPath {
		t.Fatalf("default path: %s", p)
	}
}

// compact is JSON without its white space.
func compact(t *testing.T, v []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
