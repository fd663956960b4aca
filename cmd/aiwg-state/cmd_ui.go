package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/ui"
)

func newUICommand() *cli.Command {
	return &cli.Command{
		Name:  "ui",
		Usage: "review the store in a browser: a read-only web app on a loopback address",
		Description: `Serves the review app over this store: an overview of the branches and
agent branches (ahead and behind, last mutation, open conflicts, held
leases, queues), each branch's history with merges drawn and filters
(agent, file, key path, correlation id, time), a mutation's trailers,
signature and key-level diff, a pull-request view (BASE...HEAD as review
makes it, with the merge's dry run key by key), documents with per-key
blame and history at any revision, RLM states and checkpoints, and
trajectories with a chart of tokens and cost per iteration. Pages show
the branch's head as new commits land.

It reads and never writes: every route is GET, the pages' script and
style come from the binary (no network), and everything an agent wrote
is shown as text. It listens on 127.0.0.1 (a free port unless --addr
says) and answers only to loopback host names, so another web page
cannot reach it; --allow-remote serves another address and any host
name: put it behind your own authentication.

Examples:
   aiwg-state ui
   aiwg-state ui --addr 127.0.0.1:7070 --open
   aiwg-state ui --branch agents/planner/main`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "the address to listen on (port 0: a free one)"},
			&cli.BoolFlag{Name: "open", Usage: "open the app in the default browser"},
			&cli.BoolFlag{Name: "allow-remote", Usage: "allow an address other than loopback, and any Host header"},
		),
		Action: command(func(s *session) error {
			return runUI(s.c.Context, s, uiOptions{
				Addr:        s.c.String("addr"),
				Open:        s.c.Bool("open"),
				AllowRemote: s.c.Bool("allow-remote"),
				Branch:      s.c.String("branch"),
			})
		}),
	}
}

// uiOptions are the flags runUI reads.
type uiOptions struct {
	Addr        string // --addr
	Open        bool   // --open
	AllowRemote bool   // --allow-remote
	Branch      string // --branch
}

func runUI(ctx context.Context, s *session, opts uiOptions) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return usagef("--addr %q: want HOST:PORT (127.0.0.1:7070): %v", opts.Addr, err)
	}
	if !opts.AllowRemote && !loopbackHost(host) {
		return usagef("--addr %s is not a loopback address: anyone who reaches it could read the store; pass --allow-remote to serve it anyway (behind your own authentication)", opts.Addr)
	}
	if opts.Branch != "" {
		if _, err := s.store.Resolve("", opts.Branch); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.Addr, err)
	}
	url := "http://" + ln.Addr().String() + "/"
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsLoopback() && tcp.IP.To4() != nil {
		url = fmt.Sprintf("http://127.0.0.1:%d/", tcp.Port)
	}
	srv := &http.Server{
		Handler:           ui.New(s.store, ui.Options{Branch: opts.Branch, AllowRemote: opts.AllowRemote}),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	fmt.Fprintf(s.out, "aiwg-state ui: serving %s at %s (read-only; Ctrl-C stops)\n", s.store.Dir(), url)
	if opts.Open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(s.c.App.ErrWriter, "aiwg-state: note: could not open a browser (%v); open %s\n", err, url)
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// openBrowser asks the desktop to open url.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
