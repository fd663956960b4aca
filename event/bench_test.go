package event_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/event"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/store"
)

// percentiles reports the median and the 99th percentile of ds, in ms.
func percentiles(b *testing.B, ds []time.Duration, prefix string) {
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(ds[len(ds)/2]), prefix+"p50-ms")
	b.ReportMetric(ms(ds[min(len(ds)-1, len(ds)*99/100)]), prefix+"p99-ms")
}

// BenchmarkEmit: an emit (one commit adding the event's file), from one
// of 10 agents, in a store that holds 1,000 events already; with fsync
// (sync=true) as a store writes by default, and without.
func BenchmarkEmit(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			st := storetest.NewWith(b, store.Options{NoSync: !sync})
			ctx := context.Background()
			for i := range 1000 {
				if _, _, err := st.Events().Emit(ctx, event.Input{Type: "task.progress", Payload: []byte(fmt.Sprint(i))}, store.WriteOptions{Agent: fmt.Sprintf("agent-%d", i%10)}); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, _, err := st.Events().Emit(ctx, event.Input{Type: "task.progress", Target: "coder", Payload: []byte(`{"step":1}`)}, store.WriteOptions{Agent: fmt.Sprintf("agent-%d", i%10)}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			percentiles(b, lat, "")
		})
	}
}

// BenchmarkSubscriberDelay: the time from an emit's return to a durable
// subscriber's handler receiving it (p50 and p99), the subscriber reading
// the branch every poll (100ms, watch's default, and 10ms), filtering by
// event type, while other commits land between. Each emit comes at a
// random moment of the poll (the subscriber's clock and the emitter's are
// not in step), so the delay is what a commit landing at any time sees.
func BenchmarkSubscriberDelay(b *testing.B) {
	for _, poll := range []time.Duration{100 * time.Millisecond, 10 * time.Millisecond} {
		b.Run(fmt.Sprintf("poll=%s", poll), func(b *testing.B) {
			st := storetest.New(b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sub, err := st.Events().Subscriber("bench")
			if err != nil {
				b.Fatal(err)
			}
			got := make(chan string, 16)
			done := make(chan error, 1)
			go func() {
				done <- sub.Subscribe(ctx, st.Store, event.SubscribeOptions{Watch: store.WatchOptions{Event: "task.*", Poll: poll}}, func(ms []*store.Mutation) error {
					for _, m := range ms {
						got <- m.Commit
					}
					return nil
				})
			}()
			// Until the subscriber has read the branch once.
			time.Sleep(2 * poll)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				time.Sleep(rand.N(poll))
				b.StartTimer()
				if _, err := st.Put(ctx, "noise.json", []byte(fmt.Sprint(i)), store.WriteOptions{Agent: "other"}); err != nil {
					b.Fatal(err)
				}
				_, m, err := st.Events().Emit(ctx, event.Input{Type: "task.progress"}, store.WriteOptions{Agent: "a"})
				if err != nil {
					b.Fatal(err)
				}
				emitted := time.Now()
				if c := <-got; c != m.Commit {
					b.Fatalf("delivered %s, emitted %s", c, m.Commit)
				}
				lat = append(lat, time.Since(emitted))
			}
			b.StopTimer()
			percentiles(b, lat, "delay-")
			cancel()
			<-done
		})
	}
}
