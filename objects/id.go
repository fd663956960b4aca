package objects

import (
	"crypto/rand"
	"encoding/hex"
)

// NewID returns prefix, a dash and 8 random lowercase hex digits, e.g.
// "mut-1a2b3c4d". 32 random bits keep IDs short enough to read in logs
// while collisions among one store's IDs of a kind stay unlikely.
func NewID(prefix string) string {
	var b [4]byte
	rand.Read(b[:]) // never fails: crypto/rand aborts the program instead
	return prefix + "-" + hex.EncodeToString(b[:])
}
