// Package redteam holds the attacks a hostile agent would try against a
// store and its server, each as a test that performs the attack and
// asserts the refusal: the exit code, the message, and that neither the
// server's refs nor the attacker's local store moved.
//
// Agents are untrusted by nature: a prompt-injected agent with push access
// is exactly what the store exists to audit. So the attacks go through real
// servers on loopback, as an agent's would: `git daemon`, and `git
// http-backend` behind HTTP basic authentication that tells the server's
// pre-receive hook who is pushing (REMOTE_USER). The package has no code of
// its own; `go test ./redteam/` runs the suite.
package redteam
