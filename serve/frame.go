package serve

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Version is the protocol version a client sends; a server of another
// version declines the request, and the client runs the command itself.
const Version = 1

// Frame types. Client to server: request, stdin data, stdin end. Server
// to client: started (the command is about to run), stdout, stderr,
// need-stdin, exit, decline.
const (
	frameRequest  byte = 'Q'
	frameStdin    byte = 'I'
	frameStdinEnd byte = 'i'
	frameStdout   byte = 'O'
	frameStderr   byte = 'E'
	frameStarted  byte = 'S'
	frameNeedIn   byte = 'N'
	frameExit     byte = 'X'
	frameDecline  byte = 'D'
)

// Bounds on what a peer may send: a request carries the arguments and the
// environment (each bounded by the kernel at exec: 128 KB an argument, 2
// MB in all on Linux), a data frame one chunk of a stream.
const (
	maxRequest = 8 << 20
	maxData    = 1 << 20
	chunk      = 64 << 10
)

// ErrProtocol: the peer sent something that is not a frame of this
// protocol, or one out of turn.
var ErrProtocol = errors.New("serve: protocol error")

// writeFrame writes one frame in a single write, so frames of two
// goroutines sharing a connection under a mutex never interleave.
func writeFrame(w io.Writer, typ byte, payload []byte) error {
	buf := make([]byte, 5+len(payload))
	buf[0] = typ
	binary.BigEndian.PutUint32(buf[1:5], uint32(len(payload)))
	copy(buf[5:], payload)
	_, err := w.Write(buf)
	return err
}

// readFrame reads one frame whose payload is at most max bytes.
func readFrame(r io.Reader, max int) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if uint64(n) > uint64(max) {
		return 0, nil, fmt.Errorf("%w: a %q frame of %d bytes (at most %d)", ErrProtocol, hdr[0], n, max)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return hdr[0], payload, nil
}

func exitPayload(code int) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(int32(code)))
}

func parseExit(p []byte) (int, error) {
	if len(p) != 4 {
		return 0, fmt.Errorf("%w: an exit frame of %d bytes", ErrProtocol, len(p))
	}
	return int(int32(binary.BigEndian.Uint32(p))), nil
}
