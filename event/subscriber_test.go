package event_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/event"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/store"
)

// TestSubscriberBatchesAndDeadLetters: a subscriber gets its events in
// batches, in commit order; a batch its handler fails on MaxFailures
// times becomes dead letters and delivery goes on; a second run starts
// at the cursor the first left; a second process is refused while one
// runs.
func TestSubscriberBatchesAndDeadLetters(t *testing.T) {
	st := storetest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := strings.TrimSpace(storetest.Git(t, st, "rev-parse", "HEAD"))
	for i := range 7 {
		typ := "task.progress"
		if i == 3 {
			typ = "task.poison"
		}
		emit(t, st, typ, "planner", event.Input{Payload: []byte(fmt.Sprint(i))}, store.WriteOptions{})
		if _, err := st.Put(ctx, "noise.json", []byte(fmt.Sprint(i)), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := st.Events().Subscriber("worker")
	if err != nil {
		t.Fatal(err)
	}
	var batches []string
	calls := 0
	o := event.SubscribeOptions{Watch: store.WatchOptions{From: start, Event: "task.*", Poll: time.Millisecond}, Batch: 2, MaxWait: 20 * time.Millisecond, MaxFailures: 3, Retry: time.Millisecond}
	err = sub.Subscribe(ctx, st.Store, o, func(ms []*store.Mutation) error {
		calls++
		var b []string
		for _, m := range ms {
			b = append(b, strings.TrimPrefix(m.Subject, "event task."))
			if m.Subject == "event task.poison" {
				return errors.New("cannot handle poison")
			}
		}
		batches = append(batches, strings.Join(b, ","))
		if len(batches) == 3 {
			// A second process meanwhile is refused.
			other, _ := st.Events().Subscriber("worker")
			if err := other.Subscribe(ctx, st.Store, o, func([]*store.Mutation) error { return nil }); !errors.Is(err, store.ErrLocked) {
				t.Errorf("a second subscriber process: %v", err)
			}
			return event.ErrStop
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Batches of two; the batch holding the poison fails three times and
	// is set aside whole.
	if want := "progress,progress|progress,progress|progress"; strings.Join(batches, "|") != want {
		t.Errorf("batches %q, want %q", strings.Join(batches, "|"), want)
	}
	if calls != 6 {
		t.Errorf("%d handler calls, want 6 (3 failures)", calls)
	}
	dead, err := sub.DeadLetters()
	if err != nil || len(dead) != 2 || dead[1].Mutation.Subject != "event task.poison" || dead[0].Failures != 3 || !strings.Contains(dead[0].Error, "poison") {
		t.Fatalf("dead letters %+v %v", dead, err)
	}
	// A second run goes on from the cursor: the new event alone.
	cur, err := sub.Cursor()
	if err != nil || cur.Delivered != 5 {
		t.Fatalf("cursor %+v %v", cur, err)
	}
	emit(t, st, "task.done", "planner", event.Input{}, store.WriteOptions{})
	var got []string
	err = sub.Subscribe(ctx, st.Store, o, func(ms []*store.Mutation) error {
		for _, m := range ms {
			got = append(got, m.Subject)
		}
		if len(got) >= 1 {
			return event.ErrStop
		}
		return nil
	})
	if err != nil || strings.Join(got, ",") != "event task.done" {
		t.Errorf("second run: %v %v", got, err)
	}
	// The cursor is local, in the git directory, out of every ref.
	if _, err := os.Stat(filepath.Join(st.Dir(), "aiwg", "subscribers", "worker", "cursor.json")); err != nil {
		t.Error(err)
	}
	if refs := storetest.Git(t, st, "for-each-ref"); strings.Contains(refs, "worker") {
		t.Errorf("a ref names the subscriber:\n%s", refs)
	}
	names, err := st.Events().Subscribers()
	if err != nil || strings.Join(names, ",") != "worker" {
		t.Errorf("subscribers %v %v", names, err)
	}
	if err := sub.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Cursor(); !errors.Is(err, event.ErrNoCursor) {
		t.Errorf("after remove: %v", err)
	}
	if _, err := st.Events().Subscriber("../x"); !errors.Is(err, store.ErrUsage) {
		t.Errorf("a bad name: %v", err)
	}
	storetest.Fsck(t, st)
}
