package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aiwg/aiwg-state/store"
)

// bytesPerMutation writes n mutations to a fresh store and reports the
// bytes this process (and the git maintenance it ran, counted once it was
// waited for) handed to write(2) per mutation, against the size of one
// commit's own objects stored alone: a pack of exactly the blob, the
// trees and the commit it adds, undeltified and uncompressed, as the
// store writes them (what the file-minimum row writes), with its index.
func bytesPerMutation(ctx context.Context, work string, n int) {
	st := seedStore(ctx, filepath.Join(work, "bytes"), false)
	before := wchar()
	for i := 0; i < n; i++ {
		_, err := st.Set(ctx, docPath(i%docs), "status.value", []byte(fmt.Sprintf("%d", i+2_000_000)), store.WriteOptions{Agent: "bench"})
		check(err)
	}
	dir := st.Dir()
	st.Close() // waits for maintenance it started
	written := float64(wchar()-before) / float64(n)
	pack, idx := ownPack(dir)
	own := float64(pack + idx)
	fmt.Printf("    bytes written per mutation: %.1f KB (pack, index, ref, and maintenance's roll-ups), a commit's own objects in a pack with its index %.1f KB (%d + %d): %.2fx (target <= 1.5x)\n",
		written/1024, own/1024, pack, idx, written/own)
}

// wchar is the bytes this process and its waited-for children passed to
// write(2) and its kin.
func wchar() int64 {
	data, err := os.ReadFile("/proc/self/io")
	check(err)
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			check(err)
			return n
		}
	}
	panic("no wchar in /proc/self/io")
}

// ownPack sizes a pack of exactly the objects the newest commit of the
// store at dir adds (objects written whole, as stored, no deltas) and its
// version 2 index.
func ownPack(dir string) (pack, idx int) {
	list := exec.Command("git", "--git-dir", dir, "rev-list", "--objects", "HEAD", "--not", "HEAD^")
	objs, err := list.Output()
	check(err)

	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(string(objs)), "\n") {
		ids = append(ids, strings.Fields(l)[0])
	}
	po := exec.Command("git", "--git-dir", dir, "pack-objects", "--stdout", "--window=0", "--compression=0", "-q")
	po.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	out, err := po.Output()
	check(err)
	return len(out), 8 + 1024 + 28*len(ids) + 40
}
