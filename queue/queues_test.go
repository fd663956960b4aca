package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/queue"
	"github.com/aiwg/aiwg-state/store"
)

// TestQueueTakesEachMessageOnce: consumers with stores of their own take
// from one queue at once; every message is taken exactly once, and each
// consumer sees its messages in the order they were put.
func TestQueueTakesEachMessageOnce(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	const messages, consumers = 40, 4
	for i := 0; i < messages; i++ {
		if _, _, err := st.Queues().Put(ctx, "work", []byte(fmt.Sprint(i)), store.WriteOptions{Agent: "producer"}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	taken := map[int]string{}
	var wg sync.WaitGroup
	for c := 0; c < consumers; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			s, err := aiwgstate.Open(ctx, st.Dir(), store.Options{NoSync: true})
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			agent := fmt.Sprintf("consumer-%d", c)
			last := -1
			for {
				msg, _, err := s.Queues().Take(ctx, "work", queue.TakeOptions{}, store.WriteOptions{Agent: agent})
				if errors.Is(err, queue.ErrEmpty) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				var n int
				json.Unmarshal(msg.Payload, &n)
				if n <= last {
					t.Errorf("%s took %d after %d", agent, n, last)
				}
				last = n
				mu.Lock()
				if other, dup := taken[n]; dup {
					t.Errorf("message %d taken by %s and %s", n, other, agent)
				}
				taken[n] = agent
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	if len(taken) != messages {
		t.Errorf("%d of %d messages taken", len(taken), messages)
	}
	if qs, _ := st.Queues().List(ctx, store.ReadOptions{}); len(qs) != 0 {
		t.Errorf("queues left: %+v", qs)
	}
	// Who took each message is in the history.
	takes := storetest.Git(t, st, "log", "--format=%an", "--grep=^queue take work$")
	if n := strings.Count(takes, "consumer-"); n != messages {
		t.Errorf("%d take commits, want %d", n, messages)
	}
	storetest.Fsck(t, st)
}

// TestQueueTakeWaits: a take on an empty queue waits for a put, and gives
// up as empty when its wait runs out.
func TestQueueTakeWaits(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, _, err := st.Queues().Take(ctx, "inbox/pulse", queue.TakeOptions{Wait: 50 * time.Millisecond, Poll: 5 * time.Millisecond}, store.WriteOptions{}); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("take from an empty queue: %v", err)
	}
	go func() {
		time.Sleep(30 * time.Millisecond)
		st.Queues().Put(ctx, "inbox/pulse", []byte(`"wake up"`), store.WriteOptions{Agent: "conductor"})
	}()
	msg, _, err := st.Queues().Take(ctx, "inbox/pulse", queue.TakeOptions{Wait: 30 * time.Second, Poll: 5 * time.Millisecond}, store.WriteOptions{Agent: "pulse"})
	if err != nil || string(msg.Payload) != `"wake up"` || msg.Producer != "conductor" {
		t.Fatalf("waited take: %+v %v", msg, err)
	}
}
