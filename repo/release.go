package repo

import "syscall"

// releaseMapped drops this process's resident pages of every mapped pack
// and index (see Repo.ReleaseMapped); the mappings stay valid and read
// the file again when touched. An index this process wrote lives on the
// heap, not in a mapping, and is left alone: the advice would zero it.
func (o *objReader) releaseMapped() {
	for _, p := range o.packs {
		if len(p.pack) > 0 {
			_ = syscall.Madvise(p.pack, syscall.MADV_DONTNEED)
		}
		if len(p.idx) > 0 && !p.heapIdx {
			_ = syscall.Madvise(p.idx, syscall.MADV_DONTNEED)
		}
	}
	for _, a := range o.alts {
		a.releaseMapped()
	}
}
