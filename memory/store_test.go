package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/store"
)

// TestMemoryLifecycle: put, append, expiry, prune, delete and the JSON
// Lines bridge, each one commit git reads, and a record's history is its
// file's.
func TestMemoryLifecycle(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	at := func(d time.Duration) store.WriteOptions {
		return store.WriteOptions{Agent: "pulse", Time: now.Add(d)}
	}
	theme := memory.Key{Namespace: "long_term", Kind: "preference", ID: "theme"}
	cool := memory.Key{Namespace: "session", Kind: "cooldown", ID: "monitors"}
	log := memory.Key{Namespace: "daily_log", Kind: "entries", ID: "2026-11-24"}
	if _, _, err := st.Memory().Put(ctx, theme, []byte(`{"value":"dark"}`), 0, at(0)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Memory().Put(ctx, theme, []byte(`{"value":"light"}`), 0, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	// Expired an hour ago by the store's clock (times are the writer's).
	if _, _, err := st.Memory().Put(ctx, cool, []byte(`true`), time.Second, at(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	for i, item := range []string{`"start"`, `{"did":"deploy"}`} {
		if _, _, err := st.Memory().Append(ctx, log, []byte(item), 0, at(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := st.Memory().Get(ctx, theme, store.ReadOptions{})
	if err != nil || string(r.Payload) != `{"value":"light"}` || !r.CreatedAt.Equal(now) || !r.UpdatedAt.Equal(now.Add(time.Second)) {
		t.Fatalf("get: %+v %v", r, err)
	}
	if r, err := st.Memory().Get(ctx, log, store.ReadOptions{}); err != nil || string(r.Payload) != `["start",{"did":"deploy"}]` {
		t.Fatalf("appended: %+v %v", r, err)
	}
	if _, err := st.Memory().Get(ctx, cool, store.ReadOptions{}); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired record: %v", err)
	}
	if r, err := st.Memory().Get(ctx, theme, store.ReadOptions{At: "HEAD~4"}); err != nil || string(r.Payload) != `{"value":"dark"}` {
		t.Errorf("at HEAD~4: %+v %v", r, err)
	}
	live, err := st.Memory().List(ctx, memory.ListOptions{})
	if err != nil || len(live) != 2 {
		t.Fatalf("live records: %+v %v", live, err)
	}
	all, _ := st.Memory().List(ctx, memory.ListOptions{Expired: true})
	if len(all) != 3 {
		t.Errorf("with expired: %d records", len(all))
	}
	keys, _, err := st.Memory().Prune(ctx, "", store.WriteOptions{Agent: "janitor"})
	if err != nil || len(keys) != 1 || keys[0] != cool {
		t.Fatalf("prune: %v %v", keys, err)
	}
	if _, _, err := st.Memory().Prune(ctx, "", store.WriteOptions{}); !errors.Is(err, store.ErrNoChange) {
		t.Errorf("a second prune: %v", err)
	}
	if got := storetest.Git(t, st, "log", "--format=%s", "--", theme.File()); got != "memory put long_term/preference/theme\nmemory put long_term/preference/theme\n" {
		t.Errorf("the record's history:\n%s", got)
	}
	// The bridge: what is exported imports into another store as it was.
	other := storetest.New(t)
	if res, err := other.Memory().Import(ctx, live, store.WriteOptions{}); err != nil || res.Written != 2 {
		t.Fatalf("import: %+v %v", res, err)
	}
	if res, err := other.Memory().Import(ctx, live, store.WriteOptions{}); !errors.Is(err, store.ErrNoChange) || res.Unchanged != 2 {
		t.Errorf("the same import again: %+v %v", res, err)
	}
	back, _ := other.Memory().List(ctx, memory.ListOptions{})
	if len(back) != 2 || !back[1].UpdatedAt.Equal(live[1].UpdatedAt) || string(back[1].Payload) != string(live[1].Payload) {
		t.Errorf("imported %+v, exported %+v", back, live)
	}
	if _, err := st.Memory().Delete(ctx, theme, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Memory().Delete(ctx, theme, store.WriteOptions{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting it again: %v", err)
	}
	storetest.Fsck(t, st)
	storetest.Fsck(t, other)
}

// TestMemoryImportIsAllOrNothing: one bad record writes none.
func TestMemoryImportIsAllOrNothing(t *testing.T) {
	st := storetest.New(t)
	head := storetest.Git(t, st, "rev-parse", "HEAD")
	now := time.Now()
	good := memory.Record{Key: memory.Key{Namespace: "session", Kind: "a", ID: "b"}, Payload: []byte(`1`), CreatedAt: now, UpdatedAt: now}
	bad := good
	bad.ID = "c"
	bad.Payload = []byte(`{`)
	if _, err := st.Memory().Import(context.Background(), []memory.Record{good, bad}, store.WriteOptions{}); err == nil {
		t.Fatal("a bad record imported")
	}
	if _, err := st.Memory().Import(context.Background(), []memory.Record{good, good}, store.WriteOptions{}); !errors.Is(err, store.ErrUsage) {
		t.Errorf("one record twice: %v", err)
	}
	if storetest.Git(t, st, "rev-parse", "HEAD") != head {
		t.Error("a refused import made a commit")
	}
}
