package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/aiwg/aiwg-state/cache"
	"github.com/aiwg/aiwg-state/frame"
	"github.com/aiwg/aiwg-state/internal/sandbox"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/store"
)

// The disposable tiers over MCP. A session's frame is its run's: held in
// the server's memory, keyed by a run id the server gives the session
// (or one the call names, a trajectory's), and discarded when the
// session closes.

type FrameArgs struct {
	Run string `json:"run,omitempty" jsonschema:"the run whose frame this is (default: this MCP session's own run, discarded when the session closes); a trajectory id ends with the trajectory"`
}

type FrameSetIn struct {
	Key   string `json:"key" jsonschema:"the frame key"`
	Value any    `json:"value" jsonschema:"any JSON value"`
	TTL   string `json:"ttl,omitempty" jsonschema:"discard the run this long after this set (a Go duration: 90s, 15m, 1h; default 24h)"`
	FrameArgs
}

type FrameKeyIn struct {
	Key string `json:"key" jsonschema:"the frame key"`
	FrameArgs
}

type FrameRunIn struct {
	FrameArgs
}

type FramePromoteIn struct {
	Key     string `json:"key" jsonschema:"the frame key whose value is written"`
	To      string `json:"to" jsonschema:"the document the value is written to"`
	KeyPath string `json:"key_path,omitempty" jsonschema:"the key path in that document (default: the whole document)"`
	FrameArgs
	WriteArgs
}

type CacheSetIn struct {
	Key   string `json:"key" jsonschema:"the cache key"`
	Value any    `json:"value" jsonschema:"any JSON value"`
	TTL   string `json:"ttl,omitempty" jsonschema:"the entry expires this long from now (a Go duration; default: never, but eviction may drop it)"`
}

type CacheKeyIn struct {
	Key string `json:"key" jsonschema:"the cache key"`
}

// sessionRun is the run id of the calling session, made on its first use
// of the frame; its frame ends with the session.
func (s *Server) sessionRun(c *call) string {
	var ss *sdk.ServerSession
	if c.req != nil {
		ss = c.req.Session
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if run, ok := s.runs[ss]; ok {
		return run
	}
	b := make([]byte, 8)
	rand.Read(b)
	run := "mcp-" + hex.EncodeToString(b)
	s.runs[ss] = run
	if ss != nil {
		go func() {
			_ = ss.Wait()
			s.mu.Lock()
			delete(s.runs, ss)
			s.mu.Unlock()
			_ = s.st.Frames().End(run)
		}()
	}
	return run
}

func (s *Server) runOf(c *call, a FrameArgs) string {
	if a.Run != "" {
		return a.Run
	}
	return s.sessionRun(c)
}

// mayRead is nil when the calling agent's sandbox profile lets it read
// file (a store path).
func (s *Server) mayRead(ctx context.Context, c *call, file string) error {
	return sandbox.CheckRead(ctx, s.st.Store, c.agent, file)
}

// readable keeps the entries of a listing the agent may read (every
// directory: its name tells no content).
func (s *Server) readable(ctx context.Context, c *call, es []store.Entry) []store.Entry {
	pr, err := sandbox.ProfileOf(ctx, s.st.Store, c.agent)
	if err != nil {
		return nil // the profile cannot be read: show nothing, never all
	}
	if pr == nil {
		return es
	}
	out := es[:0:0]
	for _, e := range es {
		if e.IsDir || pr.CheckRead(c.agent, e.Path) == nil {
			out = append(out, e)
		}
	}
	return out
}

// readableDiff keeps the files of a diff the agent may read (both sides
// of a rename).
func (s *Server) readableDiff(ctx context.Context, c *call, files []store.FileDiff) []store.FileDiff {
	pr, err := sandbox.ProfileOf(ctx, s.st.Store, c.agent)
	if err != nil {
		return []store.FileDiff{} // the profile cannot be read: show nothing
	}
	if pr == nil {
		return files
	}
	out := []store.FileDiff{}
	for _, f := range files {
		if pr.CheckRead(c.agent, f.File) == nil && (f.From == "" || pr.CheckRead(c.agent, f.From) == nil) {
			out = append(out, f)
		}
	}
	return out
}

// readableRecords keeps the memory records of namespaces the agent may use.
func (s *Server) readableRecords(ctx context.Context, c *call, recs []memory.Record) []memory.Record {
	pr, err := sandbox.ProfileOf(ctx, s.st.Store, c.agent)
	if err != nil {
		return nil // the profile cannot be read: show nothing
	}
	if pr == nil {
		return recs
	}
	out := recs[:0:0]
	for _, r := range recs {
		if pr.MayUseMemory(r.Namespace) {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) addTierTools() {
	add(s, "frame_set", "Keep a scratch value for this run in its frame: never committed, discarded when the run ends (this session closes, its trajectory completes) or its ttl passes, "+
		"bounded by the store's limits.max_frame_bytes (kind limit past it). Returns {run, key}.", writes,
		func(ctx context.Context, c *call, in FrameSetIn) (any, string, error) {
			v, err := jsonValue("value", in.Value, c.has("value"))
			if err != nil {
				return nil, "", err
			}
			ttl, err := duration("ttl", in.TTL, 0)
			if err != nil {
				return nil, "", err
			}
			run := s.runOf(c, in.FrameArgs)
			if err := s.st.Frames().Set(ctx, run, in.Key, v, frame.Options{Agent: c.agent, TTL: ttl}); err != nil {
				return nil, "", err
			}
			return map[string]any{"run": run, "key": in.Key}, "set " + in.Key, nil
		})
	add(s, "frame_get", "Read a value of this run's frame. Returns {run, key, value}; a missing key is kind not_found.", readOnly,
		func(ctx context.Context, c *call, in FrameKeyIn) (any, string, error) {
			run := s.runOf(c, in.FrameArgs)
			v, err := s.st.Frames().Get(ctx, run, in.Key, frame.Options{Agent: c.agent})
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"run": run, "key": in.Key, "value": json.RawMessage(v)}, string(v), nil
		})
	add(s, "frame_ls", "This run's frame: its keys with their sizes, its size and when it is discarded. Returns {run, keys, bytes, expires}.", readOnly,
		func(ctx context.Context, c *call, in FrameRunIn) (any, string, error) {
			run := s.runOf(c, in.FrameArgs)
			r, err := s.st.Frames().Run(ctx, run, frame.Options{Agent: c.agent})
			if err != nil {
				return nil, "", err
			}
			keys := map[string]int{}
			for k, v := range r.Values {
				keys[k] = len(v)
			}
			return map[string]any{"run": run, "keys": keys, "bytes": r.Bytes(), "expires": r.Expires.UTC().Format(time.RFC3339)}, fmt.Sprintf("%d keys, %d bytes", len(keys), r.Bytes()), nil
		})
	add(s, "frame_clear", "Discard this run's frame now: the run has ended. Returns {run, cleared}.", replaces,
		func(ctx context.Context, c *call, in FrameRunIn) (any, string, error) {
			run := s.runOf(c, in.FrameArgs)
			if err := s.st.Frames().Clear(ctx, run, frame.Options{Agent: c.agent}); err != nil {
				return nil, "", err
			}
			return map[string]any{"run": run, "cleared": true}, "cleared", nil
		})
	add(s, "frame_promote", "Write a value of this run's frame into versioned state (one commit whose Frame-Run and Frame-Key trailers say where it came from). Returns the mutation.", writes,
		func(ctx context.Context, c *call, in FramePromoteIn) (any, string, error) {
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			run := s.runOf(c, in.FrameArgs)
			return write(s.st.Frames().Promote(ctx, run, in.Key, in.To, in.KeyPath, frame.Options{Agent: c.agent}, wo))
		})
	add(s, "cache_set", "Keep a value in the store's cache on this machine: never committed, never pushed, bounded with least-recently-used eviction. Returns {key}.", writes,
		func(ctx context.Context, c *call, in CacheSetIn) (any, string, error) {
			v, err := jsonValue("value", in.Value, c.has("value"))
			if err != nil {
				return nil, "", err
			}
			ttl, err := duration("ttl", in.TTL, 0)
			if err != nil {
				return nil, "", err
			}
			if err := s.st.Cache().Set(ctx, in.Key, v, cache.Options{Agent: c.agent, TTL: ttl}); err != nil {
				return nil, "", err
			}
			return map[string]any{"key": in.Key}, "cached " + in.Key, nil
		})
	add(s, "cache_get", "Read a cache entry. Returns {key, value, expires}; an absent, expired or evicted entry is kind not_found.", readOnly,
		func(ctx context.Context, c *call, in CacheKeyIn) (any, string, error) {
			v, e, err := s.st.Cache().Get(ctx, in.Key, cache.Options{Agent: c.agent})
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"key": in.Key, "value": json.RawMessage(v), "expires": e.Expires}, string(v), nil
		})
	add(s, "cache_rm", "Remove a cache entry. Returns {key, removed}.", replaces,
		func(ctx context.Context, c *call, in CacheKeyIn) (any, string, error) {
			ok, err := s.st.Cache().Remove(ctx, in.Key, cache.Options{Agent: c.agent})
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"key": in.Key, "removed": ok}, fmt.Sprint(ok), nil
		})
}
