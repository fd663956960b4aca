package rlm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/store"
)

// A completion handler is a command, and the manifest that holds it is
// versioned: whoever can push to a remote this store pulls from could
// plant one. Git never transfers hooks for this reason; the store keeps
// the same line. A handler that history brings runs only once the
// operator of this machine has trusted its exact content (Trust), and the
// record of that consent lives under the git directory, never in the tree,
// so no push or pull can make or widen it. A changed handler (command or
// name) is another handler: it needs trust again. A handler set from this
// machine (SetCompletionHandlers) is trusted by setting it.

// trustFile is where a store records the handlers trusted on this
// machine: under the git directory, which neither push nor pull carries.
const trustFile = "aiwg/trust.json"

// TrustedHandler is a completion handler this machine has consented to
// run: its exact content and the digest that names it.
type TrustedHandler struct {
	// Digest is "sha256:" and the hex SHA-256 of the handler's JSON,
	// {"name":…,"command":[…]}: any change of either makes another one.
	Digest  string    `json:"digest"`
	Name    string    `json:"name"`
	Command []string  `json:"command"`
	Trusted time.Time `json:"trusted"`
}

// HandlerStatus is a handler of the manifest and whether it may run here.
type HandlerStatus struct {
	CompletionHandler
	Digest  string `json:"digest"`
	Trusted bool   `json:"trusted"`
}

// CommandLine shows a command as a shell would read it, one line, for an
// operator to read before trusting it: an argument with spaces or shell
// syntax is single-quoted, and one holding a line break, a terminal escape
// or any other unprintable character is shown Go-quoted ("\x1b[2K…"), so
// that what is shown cannot hide what runs.
func CommandLine(cmd []string) string {
	out := make([]string, len(cmd))
	for i, a := range cmd {
		switch {
		case strings.IndexFunc(a, func(r rune) bool { return !unicode.IsPrint(r) || r == utf8.RuneError }) >= 0:
			out[i] = strconv.Quote(a)
		case a == "" || strings.ContainsAny(a, " \t\"'{}[]$%|&;<>()*?#!\\`~"):
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		default:
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

// HandlerDigest names a handler's exact content.
func HandlerDigest(h CompletionHandler) string {
	b, err := json.Marshal(struct {
		Name    string   `json:"name"`
		Command []string `json:"command"`
	}{h.Name, h.Command})
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TrustedHandlers lists the handlers trusted on this machine, whether the
// manifest still holds them or not.
func (s *States) TrustedHandlers(ctx context.Context) ([]TrustedHandler, error) {
	return s.readTrust()
}

// HandlerTrust lists the manifest's handlers (at ro) with their digests
// and whether each is trusted here.
func (s *States) HandlerTrust(ctx context.Context, ro store.ReadOptions) ([]HandlerStatus, error) {
	hs, err := s.CompletionHandlers(ctx, ro)
	if err != nil {
		return nil, err
	}
	trusted, err := s.readTrust()
	if err != nil {
		return nil, err
	}
	out := make([]HandlerStatus, 0, len(hs))
	for _, h := range hs {
		d := HandlerDigest(h)
		out = append(out, HandlerStatus{CompletionHandler: h, Digest: d, Trusted: trustedDigest(trusted, d)})
	}
	return out, nil
}

// Trust records consent to run the manifest's handlers (at ro) that
// match: by name or digest, every one when match is empty. It returns the
// handlers it trusted; none matching is ErrNotFound.
func (s *States) Trust(ctx context.Context, ro store.ReadOptions, match []string) ([]TrustedHandler, error) {
	hs, err := s.CompletionHandlers(ctx, ro)
	if err != nil {
		return nil, err
	}
	var pick []CompletionHandler
	for _, h := range hs {
		if len(match) == 0 || slices.Contains(match, h.Name) || slices.Contains(match, HandlerDigest(h)) {
			pick = append(pick, h)
		}
	}
	if len(pick) == 0 {
		if len(hs) == 0 {
			return nil, errkind.Errorf(store.ErrNotFound, "the store has no completion handlers to trust (%s, rlm.on_complete)", store.ManifestPath)
		}
		return nil, &store.MissingError{Kind: store.MissingHandler, Name: strings.Join(match, ", ")}
	}
	return s.trust(pick)
}

// Revoke withdraws the trust of handlers matching by name or digest (all
// when match is empty), in the manifest or not. It returns those revoked.
func (s *States) Revoke(ctx context.Context, match []string) ([]TrustedHandler, error) {
	var gone []TrustedHandler
	err := s.updateTrust(func(list []TrustedHandler) ([]TrustedHandler, error) {
		keep := list[:0]
		for _, t := range list {
			if len(match) == 0 || slices.Contains(match, t.Name) || slices.Contains(match, t.Digest) {
				gone = append(gone, t)
				continue
			}
			keep = append(keep, t)
		}
		return keep, nil
	})
	if err == nil && len(gone) == 0 && len(match) > 0 {
		err = &store.MissingError{Kind: store.MissingTrustedHandler, Name: strings.Join(match, ", ")}
	}
	return gone, err
}

// trust records hs as trusted now.
func (s *States) trust(hs []CompletionHandler) ([]TrustedHandler, error) {
	var out []TrustedHandler
	err := s.updateTrust(func(list []TrustedHandler) ([]TrustedHandler, error) {
		for _, h := range hs {
			t := TrustedHandler{Digest: HandlerDigest(h), Name: h.Name, Command: slices.Clone(h.Command), Trusted: s.store.Now().UTC()}
			out = append(out, t)
			if !trustedDigest(list, t.Digest) {
				list = append(list, t)
			}
		}
		return list, nil
	})
	return out, err
}

func trustedDigest(list []TrustedHandler, digest string) bool {
	return slices.ContainsFunc(list, func(t TrustedHandler) bool { return t.Digest == digest })
}

// handlerTrusted says whether h may run here.
func (s *States) handlerTrusted(h CompletionHandler) (bool, error) {
	list, err := s.readTrust()
	if err != nil {
		return false, err
	}
	return trustedDigest(list, HandlerDigest(h)), nil
}

func (s *States) readTrust() ([]TrustedHandler, error) {
	data, err := os.ReadFile(filepath.Join(s.store.Repo().Dir(), trustFile))
	if errors.Is(err, fs.ErrNotExist) {
		return []TrustedHandler{}, nil
	}
	if err != nil {
		return nil, err
	}
	var doc struct {
		Handlers []TrustedHandler `json:"handlers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		// Local, written by this program: a damaged file trusts nothing,
		// and says so, rather than run anything.
		return nil, &store.BrokenFileError{Kind: store.BrokenTrust, File: filepath.Join(s.store.Repo().Dir(), trustFile), Err: errkind.Errorf(store.ErrInvalidRecord, "%s: %v", filepath.Join(s.store.Repo().Dir(), trustFile), err)}
	}
	if doc.Handlers == nil {
		doc.Handlers = []TrustedHandler{}
	}
	return doc.Handlers, nil
}

// updateTrust rewrites the trust file through fn, atomically (a rename):
// a reader sees the old list or the new, never half of one. Two updates at
// once may lose one, as two `git config` runs may; consent is given by
// hand, not by agents racing.
func (s *States) updateTrust(fn func([]TrustedHandler) ([]TrustedHandler, error)) error {
	list, err := s.readTrust()
	if err != nil {
		if !errors.Is(err, store.ErrInvalidRecord) {
			return err
		}
		list = []TrustedHandler{} // damaged: start again
	}
	if list, err = fn(list); err != nil {
		return err
	}
	data, err := json.MarshalIndent(map[string]any{"handlers": list}, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(s.store.Repo().Dir(), trustFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "trust-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("recording trust: %w", err)
	}
	return nil
}
