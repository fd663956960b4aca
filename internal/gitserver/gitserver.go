// Package gitserver starts real git servers on loopback for tests and
// benchmarks: `git daemon` with receive-pack enabled, and `git http-backend`
// behind net/http/cgi. Both serve every bare repository under a root
// directory, listen on 127.0.0.1 only, and stop with the test.
package gitserver

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Daemon serves root with `git daemon` and returns the base URL
// ("git://127.0.0.1:PORT/"); a repository root/x.git is at base+"x.git".
func Daemon(tb testing.TB, root string) string {
	tb.Helper()
	base, stop, err := StartDaemon(root)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return base
}

// StartDaemon is Daemon for programs without a testing.TB.
func StartDaemon(root string) (base string, stop func(), err error) {
	base, _, stop, err = StartDaemonProcess(root)
	return base, stop, err
}

// StartDaemonProcess is StartDaemon that also returns the daemon's process
// id: a benchmark reads the server's CPU time from it (its children, one
// per connection, are counted in its own once they end).
func StartDaemonProcess(root string) (base string, pid int, stop func(), err error) {
	var lastErr error
	// A free port is found by listening on :0 and closing; another process
	// may take it before git daemon binds, so try a few times.
	for attempt := 0; attempt < 5; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", 0, nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		// No limit on connections (git's default is 32): a swarm's
		// benchmark opens one per agent at once.
		cmd := exec.Command("git", "daemon", "--enable=receive-pack", "--export-all", "--reuseaddr",
			"--informative-errors", "--max-connections=0", "--base-path="+root, "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), root)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		// Its stderr stays closed: the readiness probe alone makes it complain.
		cmd.Stdout, cmd.Stderr = nil, nil
		if err := cmd.Start(); err != nil {
			return "", 0, nil, err
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		stop := func() {
			// The daemon forks a child per connection: end the whole group
			// it leads (this process started it; nothing else is in it).
			syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case <-done:
				lastErr = fmt.Errorf("git daemon on port %d exited", port)
			default:
			}
			if lastErr != nil {
				break
			}
			if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
				c.Close()
				return "git://" + addr + "/", cmd.Process.Pid, stop, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		stop()
		if lastErr == nil {
			lastErr = fmt.Errorf("git daemon on port %d did not start", port)
		}
	}
	return "", 0, nil, lastErr
}

// HTTP serves root with `git http-backend` (smart HTTP, pushes allowed) and
// returns the base URL ("http://127.0.0.1:PORT/").
func HTTP(tb testing.TB, root string) string {
	tb.Helper()
	base, stop, err := StartHTTP(root)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return base
}

// StartHTTP is HTTP for programs without a testing.TB.
func StartHTTP(root string) (base string, stop func(), err error) {
	h, err := backend(root)
	if err != nil {
		return "", nil, err
	}
	return listen(h)
}

// HTTPAuth serves root as HTTP does, behind HTTP basic authentication:
// users maps each user name to its password. Every request must
// authenticate, and git http-backend (and so the pre-receive hook) sees
// the user as REMOTE_USER, as behind a web server's authentication. A URL
// with credentials is base with "user:password@" after "http://".
func HTTPAuth(tb testing.TB, root string, users map[string]string) string {
	tb.Helper()
	h, err := backend(root)
	if err != nil {
		tb.Fatal(err)
	}
	base, stop, err := listen(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		want, known := users[user]
		if !ok || !known || subtle.ConstantTimeCompare([]byte(pass), []byte(want)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="state"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		// A handler per request: cgi.Handler passes only the environment
		// it is given, and REMOTE_USER is this request's.
		hu := *h
		hu.Env = append(append([]string(nil), h.Env...), "REMOTE_USER="+user, "AUTH_TYPE=Basic")
		hu.ServeHTTP(w, r)
	}))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return base
}

// WithUser returns an HTTP base URL carrying a user's credentials.
func WithUser(base, user, password string) string {
	return strings.Replace(base, "http://", "http://"+user+":"+password+"@", 1)
}

// backend is the CGI handler running git http-backend over root.
func backend(root string) (*cgi.Handler, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, err
	}
	return &cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			// Anonymous pushes are refused unless receive-pack is enabled.
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.receivepack", "GIT_CONFIG_VALUE_0=true",
			"PATH=" + os.Getenv("PATH"),
			"HOME=" + os.Getenv("HOME"),
		},
	}, nil
}

// listen serves h on a free loopback port.
func listen(h http.Handler) (base string, stop func(), err error) {
	srv := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv.Listener = l
	srv.Config.ReadHeaderTimeout = 10 * time.Second
	srv.Start()
	return srv.URL + "/", srv.Close, nil
}

// Bare creates an empty bare repository root/name and returns its path.
func Bare(tb testing.TB, root, name string) string {
	tb.Helper()
	dir := filepath.Join(root, name)
	if out, err := exec.Command("git", "init", "--quiet", "--bare", dir).CombinedOutput(); err != nil {
		tb.Fatalf("git init --bare: %v\n%s", err, out)
	}
	return dir
}
