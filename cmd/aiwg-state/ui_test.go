package main

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestUICommand: ui serves the app on loopback and prints its URL; it
// refuses another address unless told.
func TestUICommand(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "plan.json", "risk", `"low"`, "--agent", "planner")
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:80", "[::]:0", "example.com:80"} {
		if _, errOut, code := runCLI(t, s, "", "ui", "--addr", addr); code != exitUsage || !strings.Contains(errOut, "--allow-remote") {
			t.Errorf("ui --addr %s: exit %d: %s", addr, code, errOut)
		}
	}
	if _, _, code := runCLI(t, s, "", "ui", "--addr", "nonsense"); code != exitUsage {
		t.Errorf("ui --addr nonsense: exit %d", code)
	}
	cmd := exec.Command(bin, "ui", "--store", s)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(line)
	if url == "" {
		t.Fatalf("no URL in %q", line)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url + "doc?path=plan.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "planner") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("GET /doc: %d %s", resp.StatusCode, body)
	}
	resp, err = client.Post(url, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
}
