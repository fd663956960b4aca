package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessage bounds one JSON-RPC message (a line) over stdio, as the
// SDK's own stdio transport does.
const MaxMessage = sdk.DefaultMaxLineLength

// LineTransport is MCP's stdio transport, one JSON-RPC message a line,
// over any reader and writer. Unlike the SDK's, a line that is not a
// JSON-RPC message (malformed, over MaxMessage) is answered with a parse
// error and skipped, and the session goes on: one bad write by a host
// must not end an agent's session.
type LineTransport struct {
	In  io.Reader
	Out io.Writer
}

// Stdio is the process's standard input and output.
func Stdio() *LineTransport { return &LineTransport{In: os.Stdin, Out: os.Stdout} }

// Connect starts reading lines.
func (t *LineTransport) Connect(context.Context) (sdk.Connection, error) {
	c := &lineConn{out: t.Out, msgs: make(chan jsonrpc.Message), done: make(chan struct{})}
	go c.read(t.In)
	return c, nil
}

type lineConn struct {
	out   io.Writer
	wmu   sync.Mutex
	msgs  chan jsonrpc.Message
	err   error // why reading ended; set before msgs is closed
	done  chan struct{}
	close sync.Once
}

func (c *lineConn) read(in io.Reader) {
	defer close(c.msgs)
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, over, err := readLine(r, MaxMessage)
		if len(bytes.TrimSpace(line)) > 0 || over {
			var msg jsonrpc.Message
			var derr error
			if over {
				derr = fmt.Errorf("a message over %d MiB", MaxMessage>>20)
			} else {
				msg, derr = jsonrpc.DecodeMessage(line)
			}
			if derr != nil {
				c.parseError(derr)
			} else {
				select {
				case c.msgs <- msg:
				case <-c.done:
					return
				}
			}
		}
		if err != nil {
			c.err = err
			return
		}
	}
}

// readLine reads one line without its newline; a line longer than max is
// read to its end and dropped (over).
func readLine(r *bufio.Reader, max int) (line []byte, over bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !over {
			if len(line)+len(chunk) > max+1 {
				over, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), over, err
	}
}

// parseError answers a line that is no message: JSON-RPC's parse error,
// with a null id since none could be read.
func (c *lineConn) parseError(err error) {
	b, _ := jsonMarshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
		"code": jsonrpc.CodeParseError, "message": "parse error: " + oneLine(err.Error()) + "; the message was skipped"}})
	c.writeLine(b)
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case msg, ok := <-c.msgs:
		if !ok {
			if c.err == nil || errors.Is(c.err, io.EOF) {
				return nil, io.EOF
			}
			return nil, c.err
		}
		return msg, nil
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(b)
}

func (c *lineConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(append(b, '\n'))
	return err
}

func (c *lineConn) Close() error {
	c.close.Do(func() { close(c.done) })
	return nil
}

func (c *lineConn) SessionID() string { return "" }
