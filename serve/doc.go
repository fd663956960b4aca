// Package serve runs command lines on behalf of a thin client, over a Unix
// socket, so that an agent calling a command thousands of times pays for
// one process start of a small program per call rather than for the start
// of the whole tool and a cold store each time.
//
// A command line costs a Go program much more than its work: starting an
// 11 MB binary, initialising every package it links, and opening the store
// cold (mapping pack indexes, reading the tail pack and the trees) take
// three quarters of a CLI write's time, where the same write in a process
// that keeps the store open takes about a millisecond. A resident server
// keeps the store open; the client is a program that links nothing but
// this package, starts in about the time of an empty Go program, sends its
// arguments, working directory and environment, relays its standard input
// when the command asks for it, and prints what comes back. The pattern is
// nailgun's (a C client for a resident JVM) and the Gradle daemon's.
//
// The package knows nothing of the store or the CLI: a Handler runs an
// Invocation and returns its exit code. A handler may Decline a command it
// does not run on a client's behalf (one that depends on the process it
// runs in), before writing anything; the client then runs the command
// itself. The client falls back the same way when no server listens.
// Once a request is sent, the client never runs it again itself: a
// server that dies mid-command is reported, since the command may have
// written already.
//
// Only the user who started the server may use it: the socket is created
// with mode 0600 and, on Linux, each side checks the other's uid; the
// client talks only to a socket of its user that is not a symlink. One
// server listens on a socket at a time (an flock beside it).
//
// The wire format is a stream of frames, each a type byte, a big-endian
// uint32 length and that many bytes. The client sends a request frame
// (uvarint-framed fields, see Request), then, only after the server asks
// for it, its standard input as data frames ending with an end frame. The
// server answers with a decline frame, or with a start frame, then stdout
// and stderr data frames and perhaps a frame asking for standard input,
// and finally an exit frame.
package serve
