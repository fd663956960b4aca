package mcp

import (
	"context"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressEvery is how often a long call tells a client that asked for
// progress that it is still at work, and at most how often it reports
// counts.
const progressEvery = 250 * time.Millisecond

// progress tells the client of a long call how it goes: counts when the
// work gives them (reindex), else a beat every progressEvery (a merge), so
// that a host shows it alive and a person can cancel it. A call whose
// request carries no progress token reports nothing.
type progress struct {
	ctx   context.Context
	ss    *sdk.ServerSession
	token any
	msg   string

	mu    sync.Mutex
	n     float64 // the last progress sent: MCP wants it to grow
	last  time.Time
	done  chan struct{}
	ended sync.Once
}

func (c *call) progress(ctx context.Context, msg string) *progress {
	p := &progress{ctx: ctx, msg: msg, done: make(chan struct{})}
	if c.req == nil || c.req.Session == nil || c.req.Params == nil {
		return p
	}
	p.token = c.req.Params.GetProgressToken()
	if p.token == nil {
		return p
	}
	p.ss = c.req.Session
	go p.beat()
	return p
}

func (p *progress) beat() {
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-p.ctx.Done():
			return
		case <-t.C:
			p.mu.Lock()
			recent := time.Since(p.last) < progressEvery
			p.mu.Unlock()
			if !recent {
				p.send(-1, 0)
			}
		}
	}
}

// report is a count of work done out of total (a reindex's commits).
func (p *progress) report(done, total int) {
	if p.token == nil {
		return
	}
	p.mu.Lock()
	due := done == total || time.Since(p.last) >= progressEvery
	p.mu.Unlock()
	if due {
		p.send(float64(done), float64(total))
	}
}

// send notifies the client; done < 0 is a beat, which moves the progress
// on by one.
func (p *progress) send(done, total float64) {
	p.mu.Lock()
	if done < 0 {
		done = p.n + 1
	}
	if done <= p.n && p.n > 0 {
		p.mu.Unlock()
		return
	}
	p.n, p.last = done, time.Now()
	p.mu.Unlock()
	// A client gone or slow must not stall the work: the notification is
	// best effort.
	_ = p.ss.NotifyProgress(p.ctx, &sdk.ProgressNotificationParams{ProgressToken: p.token, Progress: done, Total: total, Message: p.msg})
}

func (p *progress) stop() { p.ended.Do(func() { close(p.done) }) }
