package queue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Dir is the directory of queues in the store's tree.
const Dir = "queues"

var (
	// ErrInvalid: a malformed queue name, message or message file.
	ErrInvalid = errors.New("invalid queue message")
	// ErrEmpty: a take found no message (after waiting, if it waited).
	ErrEmpty = errors.New("queue empty")
)

// Message is one message of a queue. Seq is its place in the queue: one
// more than the message before it, from 1 again once the queue has
// emptied; the id names it for good.
type Message struct {
	ID         string          `json:"id"`
	Queue      string          `json:"queue"`
	Seq        uint64          `json:"seq"`
	Payload    json.RawMessage `json:"payload"`
	Producer   string          `json:"producer"`
	EnqueuedAt time.Time       `json:"enqueued_at"`
}

// CheckName refuses a queue name that is not one or more identifiers
// joined by slashes (inbox/pulse, alerts).
func CheckName(name string) error {
	if name == "" {
		return errkind.Errorf(ErrInvalid, "a queue needs a name")
	}
	for _, seg := range strings.Split(name, "/") {
		if err := verbiage.ValidIdentifier(seg); err != nil {
			return errkind.Errorf(ErrInvalid, "queue %q: %v", name, err)
		}
	}
	return nil
}

// seqDigits pads sequence numbers so that file names sort in queue order.
const seqDigits = 12

// File is the message's file in the store.
func (m *Message) File() string {
	return fmt.Sprintf("%s/%s/%0*d-%s.json", Dir, m.Queue, seqDigits, m.Seq, m.ID)
}

// IsFile reports whether name (an entry of a queue's directory) is a
// message's file, and its sequence number.
func IsFile(name string) (uint64, bool) {
	stem, ok := strings.CutSuffix(name, ".json")
	if !ok || len(stem) < seqDigits+2 || stem[seqDigits] != '-' {
		return 0, false
	}
	seq, err := strconv.ParseUint(stem[:seqDigits], 10, 64)
	return seq, err == nil && verbiage.ValidID(verbiage.PrefixMessage, stem[seqDigits+1:])
}

// New makes the message a put adds after the queue's last sequence
// number.
func New(queue, id string, last uint64, payload []byte, producer string, now time.Time) (*Message, error) {
	if err := CheckName(queue); err != nil {
		return nil, err
	}
	p, err := objects.Canonical(payload)
	if err != nil {
		return nil, fmt.Errorf("queue %s: payload: %w", queue, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, p); err != nil {
		return nil, err
	}
	return &Message{ID: id, Queue: queue, Seq: last + 1, Payload: json.RawMessage(compact.Bytes()), Producer: producer, EnqueuedAt: now.UTC()}, nil
}

// Encode renders the message as the store keeps it: canonical JSON.
func (m *Message) Encode() ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return objects.Canonical(b)
}

// Decode reads the message in file; its queue, sequence number and id
// must be the ones its path names.
func Decode(file string, data []byte) (*Message, error) {
	var m Message
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, errkind.Errorf(ErrInvalid, "%s is not a queue message: %v", file, err)
	}
	if m.ID == "" || m.Queue == "" {
		return nil, errkind.Errorf(ErrInvalid, "%s is not a queue message: it has no id or queue", file)
	}
	if m.Payload == nil {
		m.Payload = json.RawMessage("null")
	}
	if CheckName(m.Queue) != nil || m.File() != file {
		return nil, errkind.Errorf(ErrInvalid, "%s holds message %s of queue %q", file, m.ID, m.Queue)
	}
	var compact bytes.Buffer
	if json.Compact(&compact, m.Payload) == nil {
		m.Payload = json.RawMessage(compact.Bytes())
	}
	return &m, nil
}
