package repo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

// goGitEncode is go-git's encoding of the same commit: the codec it
// replaced, kept as the oracle of byte-for-byte equal output (equal bytes,
// equal hashes, so stores written before and after agree).
func goGitEncode(t *testing.T, c *Commit) []byte {
	t.Helper()
	oc := object.Commit{TreeHash: c.Tree, ParentHashes: c.Parents,
		Author:    object.Signature{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When},
		Committer: object.Signature{Name: c.Committer.Name, Email: c.Committer.Email, When: c.Committer.When},
		Message:   c.Message}
	mo := &plumbing.MemoryObject{}
	if err := oc.Encode(mo); err != nil {
		t.Fatal(err)
	}
	rd, _ := mo.Reader()
	var b bytes.Buffer
	b.ReadFrom(rd)
	return b.Bytes()
}

func TestCommitCodec(t *testing.T) {
	tree := plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")
	p1 := plumbing.NewHash("1111111111111111111111111111111111111111")
	p2 := plumbing.NewHash("2222222222222222222222222222222222222222")
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+30*60), time.FixedZone("", -30*60), time.FixedZone("", -8*3600)}
	for i, tc := range []struct {
		parents []plumbing.Hash
		msg     string
	}{
		{nil, "init\n"},
		{[]plumbing.Hash{p1}, "set a\n\nMutation-Id: mut-0000abcd\nOperation: update\n"},
		{[]plumbing.Hash{p1, p2}, "merge\n\nno final newline"},
		{[]plumbing.Hash{p1}, ""},
	} {
		when := time.Unix(1700000000+int64(i)*3607, 0).In(zones[i%len(zones)])
		c := &Commit{Tree: tree, Parents: tc.parents, Message: tc.msg,
			Author:    NewSignature("agent-"+strconv.Itoa(i), when),
			Committer: Signature{Name: "Some One", Email: "some@example.org", When: when.Add(time.Second)}}
		body, err := encodeCommit(c)
		if err != nil {
			t.Fatal(err)
		}
		if want := goGitEncode(t, c); !bytes.Equal(body, want) {
			t.Fatalf("case %d: encoded\n%s\ngo-git encodes\n%s", i, body, want)
		}
		h := hashObject(plumbing.CommitObject, body)
		got, err := ParseCommit(h, body)
		if err != nil {
			t.Fatal(err)
		}
		if got.Tree != c.Tree || len(got.Parents) != len(c.Parents) || got.Message != c.Message ||
			got.Author.String() != c.Author.String() || got.Committer.String() != c.Committer.String() ||
			!got.Author.When.Equal(c.Author.When) || got.Author.When.Format("-0700") != c.Author.When.Format("-0700") {
			t.Fatalf("case %d: decoded %+v, wrote %+v", i, got, c)
		}
	}
}

// TestParseCommitOfGit reads commits git itself writes, with the headers
// ours never carry (a signature, an encoding, a mergetag), and checks each
// field against git's own formatting of them.
func TestParseCommitOfGit(t *testing.T) {
	r := newRepo(t)
	first := write(t, r, map[string]string{"a.json": "1\n"})
	sig := "-----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n =abcd\n -----END PGP SIGNATURE-----"
	raw := "tree " + first.Tree.String() + "\nparent " + first.Hash.String() +
		"\nauthor Ann Author <ann@example.org> 1700000100 -0130\ncommitter C. Ommitter <c@example.org> 1700000200 +0545" +
		"\nencoding ISO-8859-1\ngpgsig " + sig + "\nx-unknown header\n continued\n\nsubject\n\nbody line\n"
	out := testutil.Git{GitDir: r.Dir(), Stdin: raw}.Output(t, "hash-object", "-t", "commit", "-w", "--stdin")
	h := plumbing.NewHash(strings.TrimSpace(out))
	c, err := r.ReadCommit(h)
	if err != nil {
		t.Fatal(err)
	}
	format := func(f string) string {
		return strings.TrimSpace(git(t, r.Dir(), "show", "-s", "--format="+f, h.String()))
	}
	if c.Tree.String() != format("%T") || c.Parents[0].String() != format("%P") {
		t.Errorf("tree/parents %s %v; git: %s %s", c.Tree, c.Parents, format("%T"), format("%P"))
	}
	if c.Author.Name != format("%an") || c.Author.Email != format("%ae") || c.Committer.Name != format("%cn") {
		t.Errorf("identities %v %v", c.Author, c.Committer)
	}
	if got := c.Author.When.Format(time.RFC3339); got != format("%aI") {
		t.Errorf("author time %s, git %s", got, format("%aI"))
	}
	if got := c.Committer.When.Format(time.RFC3339); got != format("%cI") {
		t.Errorf("committer time %s, git %s", got, format("%cI"))
	}
	if c.Message != "subject\n\nbody line\n" {
		t.Errorf("message %q", c.Message)
	}
	// The value without the continuation lines' leading space, as
	// git verify-commit hands it to gpg.
	if c.PGPSignature != "-----BEGIN PGP SIGNATURE-----\n\niQEzBAABCAAdFiEE\n=abcd\n-----END PGP SIGNATURE-----\n" {
		t.Errorf("signature %q", c.PGPSignature)
	}
}

func TestParseCommitRejects(t *testing.T) {
	for _, body := range []string{
		"",
		"\n\nmessage",
		"parent 1111111111111111111111111111111111111111\ntree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\n",
		"tree 4b825dc642cb6eb9a060e54bf8d69288fbee49\n\n",
		"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent zz\n\n",
	} {
		if c, err := ParseCommit(plumbing.ZeroHash, []byte(body)); err == nil {
			t.Errorf("%q parsed as %+v", body, c)
		}
	}
}

func TestTagCodec(t *testing.T) {
	r := newRepo(t)
	c := write(t, r, map[string]string{"a.json": "1\n"})
	when := time.Unix(1700000000, 0).In(time.FixedZone("", 2*3600))
	tag := &Tag{Name: "cp-1", Target: c.Hash, Tagger: NewSignature("agent-1", when), Message: "checkpoint\n\nCheckpoint: cp-1\n"}
	h, err := r.WriteTag(tag)
	if err != nil {
		t.Fatal(err)
	}
	// git agrees on every field, and fsck on the object.
	git(t, r.Dir(), "update-ref", "refs/tags/cp-1", h.String())
	git(t, r.Dir(), "fsck", "--strict")
	if got := strings.TrimSpace(git(t, r.Dir(), "for-each-ref", "--format=%(objectname) %(taggername) %(taggeremail) %(taggerdate:iso-strict) %(*objectname)", "refs/tags/cp-1")); got != h.String()+" agent-1 <agent-1@agents.invalid> 2023-11-15T00:13:20+02:00 "+c.Hash.String() {
		t.Errorf("git reads the tag as %s", got)
	}
	back, err := r.ReadTag(h)
	if err != nil {
		t.Fatal(err)
	}
	if back.Name != tag.Name || back.Target != c.Hash || back.TargetType != plumbing.CommitObject || back.Message != tag.Message || !back.Tagger.When.Equal(when) {
		t.Errorf("read back %+v", back)
	}

	// A signed tag: the signature is split off the message.
	signed := "object " + c.Hash.String() + "\ntype commit\ntag cp-2\ntagger A <a@b> 1700000000 +0000\n\nnote\n-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n"
	st, err := ParseTag(plumbing.ZeroHash, []byte(signed))
	if err != nil {
		t.Fatal(err)
	}
	if st.Message != "note\n" || !strings.HasPrefix(st.PGPSignature, "-----BEGIN SSH SIGNATURE-----\n") {
		t.Errorf("signed tag: message %q signature %q", st.Message, st.PGPSignature)
	}
	if _, err := ParseTag(plumbing.ZeroHash, []byte("tag x\n\nno object\n")); err == nil {
		t.Error("a tag without object and type parsed")
	}
}

// TestAlternates reads a store whose objects live in another repository,
// as `git clone --shared` leaves it: git's objects/info/alternates.
func TestAlternates(t *testing.T) {
	src := newRepo(t)
	c := write(t, src, map[string]string{"a.json": "1\n", "d/b.json": "2\n"})
	dst := filepath.Join(t.TempDir(), "shared.git")
	testutil.Git{}.Run(t, "clone", "-q", "--bare", "--shared", src.Dir(), dst)
	if _, err := os.Stat(filepath.Join(dst, "objects", "info", "alternates")); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	head, err := r.Ref("refs/heads/main")
	if err != nil || head != c.Hash {
		t.Fatalf("ref %s %v, want %s", head, err, c.Hash)
	}
	body, err := r.ReadFileAt(c.Tree, "d/b.json")
	if err != nil || string(body) != "2\n" {
		t.Fatalf("read through alternates: %q %v", body, err)
	}
	if h, err := r.Resolve(c.Hash.String()[:9], "refs/heads/main"); err != nil || h != c.Hash {
		t.Fatalf("abbreviated name through alternates: %s %v", h, err)
	}
	// A commit in the borrowing store builds on borrowed objects.
	c2 := write(t, r, map[string]string{"a.json": "3\n"})
	git(t, dst, "fsck", "--strict")
	if got := git(t, dst, "show", c2.Hash.String()+":d/b.json"); got != "2\n" {
		t.Errorf("git show: %q", got)
	}
}

// TestObjectSizeAndPrefixes checks sizes and abbreviated names against git
// for loose objects, whole packed objects and deltas.
func TestObjectSizeAndPrefixes(t *testing.T) {
	r := newRepo(t)
	big := strings.Repeat(`{"k": "value"}`+"\n", 400)
	var last *Commit
	for i := 0; i < 30; i++ {
		// mid.json changes in three places: its deltas are longer than
		// the twenty bytes a delta's sizes take at most.
		mid := strconv.Itoa(i) + big[:2000] + strconv.Itoa(i*7) + big[2000:4000] + strconv.Itoa(i*13) + big[4000:]
		last = write(t, r, map[string]string{"big.json": big + strconv.Itoa(i) + "\n", "n.json": strconv.Itoa(i) + "\n", "mid.json": mid})
	}
	// git's repack makes deltas of the big blobs' versions.
	git(t, r.Dir(), "repack", "-a", "-d", "-f", "--depth=10")
	loose := plumbing.NewHash(strings.TrimSpace(gitIn(t, r.Dir(), "loose blob\n", "hash-object", "-w", "--stdin")))
	objs := strings.Fields(git(t, r.Dir(), "rev-list", "--objects", "--all", "--no-object-names"))
	objs = append(objs, loose.String())
	deltas, long := 0, 0
	for _, line := range strings.Split(git(t, r.Dir(), "verify-pack", "-v", packPath(t, r)), "\n") {
		if f := strings.Fields(line); len(f) >= 7 && len(f[0]) == 40 {
			deltas++
			if n, _ := strconv.Atoi(f[2]); n > 20 {
				long++
			}
		}
	}
	if deltas == 0 || long == 0 {
		t.Fatalf("the repack made %d deltas, %d of them over 20 bytes: the test would not cover them", deltas, long)
	}
	// A fresh reader: the writer's cache holds what it wrote.
	fresh, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	for _, s := range objs {
		h := plumbing.NewHash(s)
		n, err := fresh.ObjectSize(h)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSpace(git(t, r.Dir(), "cat-file", "-s", s)); strconv.FormatInt(n, 10) != want {
			t.Errorf("%s: size %d, git says %s", s, n, want)
		}
		short := strings.TrimSpace(git(t, r.Dir(), "rev-parse", "--short", s))
		r.mu.Lock()
		got := r.objs.withPrefix(short)
		r.mu.Unlock()
		if len(got) != 1 || got[0] != h {
			t.Errorf("%s finds %v, want %s", short, got, h)
		}
	}
	short := strings.TrimSpace(git(t, r.Dir(), "rev-parse", "--short", last.Hash.String()))
	if got, err := r.Resolve(short, "refs/heads/main"); err != nil || got != last.Hash {
		t.Errorf("%s resolves to %s %v", short, got, err)
	}
	if _, err := r.Resolve(last.Hash.String()[:3], "refs/heads/main"); err == nil {
		t.Error("a three-digit prefix resolved: git asks for four")
	}
	// Every one- and two-digit prefix of the ~100 objects finds exactly
	// the objects git lists under it (several share each first digit).
	for _, n := range []int{1, 2} {
		want := map[string][]string{}
		for _, s := range objs {
			want[s[:n]] = append(want[s[:n]], s)
		}
		for p, list := range want {
			r.mu.Lock()
			got := r.objs.withPrefix(p)
			r.mu.Unlock()
			if len(p) == 1 {
				if len(got) != 0 {
					t.Errorf("prefix %q of one digit matched %d objects", p, len(got))
				}
				continue
			}
			sort.Strings(list)
			var gs []string
			for _, h := range got {
				gs = append(gs, h.String())
			}
			if strings.Join(gs, " ") != strings.Join(list, " ") {
				t.Errorf("prefix %s: %v, git lists %v", p, gs, list)
			}
		}
	}
}

func packPath(t testing.TB, r *Repo) string {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "*.idx"))
	if len(ms) != 1 {
		t.Fatalf("%d packs after repack -a", len(ms))
	}
	return ms[0]
}

func FuzzParseCommit(f *testing.F) {
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@agents.invalid> 1700000000 +0000\ncommitter a <a@agents.invalid> 1700000000 +0000\n\nset a\n\nMutation-Id: mut-00000001\n"))
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent 1111111111111111111111111111111111111111\nparent 2222222222222222222222222222222222222222\nauthor A B <x> 5 -0130\ncommitter <> 1\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\nmerge"))
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor x\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := ParseCommit(plumbing.ZeroHash, body)
		if err != nil {
			return
		}
		// What parses and can be written again reads back the same.
		enc, err := encodeCommit(c)
		if err != nil {
			return
		}
		back, err := ParseCommit(plumbing.ZeroHash, enc)
		if err != nil {
			t.Fatalf("re-encoded commit does not parse: %v\n%q", err, enc)
		}
		if back.Tree != c.Tree || len(back.Parents) != len(c.Parents) || back.Message != c.Message {
			t.Fatalf("round trip changed the commit:\n%+v\n%+v", c, back)
		}
		for i, pair := range [][2]Signature{{c.Author, back.Author}, {c.Committer, back.Committer}} {
			a, b := pair[0], pair[1]
			if a.Name != b.Name || a.Email != b.Email {
				t.Fatalf("signature %d: %q <%q> became %q <%q>", i, a.Name, a.Email, b.Name, b.Email)
			}
			_, off := a.When.Zone()
			if a.When.Unix() >= 0 && off > -100*3600 && off < 100*3600 && !a.When.Equal(b.When) {
				t.Fatalf("signature %d: time %v became %v", i, a.When, b.When)
			}
		}
	})
}

func FuzzParseTag(f *testing.F) {
	f.Add([]byte("object 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ntype commit\ntag cp-1\ntagger a <a@agents.invalid> 1700000000 +0200\n\ncheckpoint\n"))
	f.Add([]byte("object 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ntype tree\ntag v\ntagger a <b> 1 +0000\n\nm\n-----BEGIN PGP SIGNATURE-----\nx\n-----END PGP SIGNATURE-----\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		tag, err := ParseTag(plumbing.ZeroHash, body)
		if err != nil {
			return
		}
		enc, err := encodeTag(tag)
		if err != nil {
			return
		}
		back, err := ParseTag(plumbing.ZeroHash, enc)
		if err != nil {
			t.Fatalf("re-encoded tag does not parse: %v\n%q", err, enc)
		}
		// The signature, written back as part of nothing, is gone; the
		// message is kept unless it now ends in what looks like one.
		if back.Target != tag.Target || back.TargetType != tag.TargetType || back.Name != tag.Name ||
			back.Tagger.Name != tag.Tagger.Name || back.Tagger.Email != tag.Tagger.Email ||
			(back.PGPSignature == "" && back.Message != tag.Message) {
			t.Fatalf("round trip changed the tag:\n%+v\n%+v", tag, back)
		}
	})
}

// TestParseTagAsGit: header order and first-wins as git's
// parse_tag_buffer, X.509 signatures split off, upper-case hex read.
func TestParseTagAsGit(t *testing.T) {
	a, b := "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	for _, tc := range []struct {
		body   string
		target string
		ok     bool
	}{
		{"object " + a + "\ntype commit\ntag v\ntagger x <y> 1 +0000\nobject " + b + "\n\nm\n", a, true},
		{"object " + strings.ToUpper(a) + "\ntype commit\ntag v\n\nm\n", a, true},
		{"object " + a + "\ntype commit\n\nno tag name\n", a, true},
		{"type commit\nobject " + a + "\ntag v\n\nm\n", "", false},
		{"object " + a + "\ntype ofs-delta\ntag v\n\nm\n", "", false},
		{"object " + a + "\n\nm\n", "", false},
	} {
		tag, err := ParseTag(plumbing.ZeroHash, []byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.body, err)
			continue
		}
		if tc.ok && tag.Target.String() != tc.target {
			t.Errorf("%q: target %s, want %s", tc.body, tag.Target, tc.target)
		}
	}
	x509 := "object " + a + "\ntype commit\ntag v\ntagger x <y> 1 +0000\n\nnote\n-----BEGIN SIGNED MESSAGE-----\nMIAG\n-----END SIGNED MESSAGE-----\n"
	if tag, err := ParseTag(plumbing.ZeroHash, []byte(x509)); err != nil || tag.Message != "note\n" || tag.PGPSignature == "" {
		t.Errorf("x509-signed tag: %+v %v", tag, err)
	}
}

// TestAgentNamesGitAccepts: an agent id with characters git refuses in an
// identity still writes a commit git fsck accepts.
func TestAgentNamesGitAccepts(t *testing.T) {
	r := newRepo(t)
	for _, agent := range []string{"bot<1>", "a>b", "plain"} {
		sig := NewSignature(agent, time.Unix(1700000000, 0))
		_, err := r.Commit(context.Background(), "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
			if err := tx.WriteFile(agent+".json", []byte("1\n")); err != nil {
				return nil, err
			}
			return &CommitInfo{Author: sig, Committer: sig, Message: "m\n"}, nil
		}, CommitOptions{})
		if err != nil {
			t.Fatalf("%q: %v", agent, err)
		}
	}
	git(t, r.Dir(), "fsck", "--strict")
	if got := strings.TrimSpace(git(t, r.Dir(), "log", "-1", "--skip=2", "--format=%an <%ae>")); got != "bot-1- <bot-1-@agents.invalid>" {
		t.Errorf("identity %q", got)
	}
}

func TestCheckCommitHeaders(t *testing.T) {
	const tree = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
	const author, committer = "author alice <a@agents.invalid> 1700000000 +0000\n", "committer alice <a@agents.invalid> 1700000000 +0000\n"
	const parent = "parent 1111111111111111111111111111111111111111\n"
	for _, c := range []struct{ name, body, want string }{
		{"plain", tree + author + committer + "\nm\n", ""},
		{"merge, signed", tree + parent + parent + author + committer + "gpgsig -----BEGIN SSH SIGNATURE-----\n author x\n -----END SSH SIGNATURE-----\n\nm\n", ""},
		{"an author in the message", tree + author + committer + "\nauthor mallory <m> 1 +0000\n", ""},
		{"two authors", tree + "author mallory <m@x> 1 +0000\n" + author + committer + "\nm\n", "2 author headers"},
		{"a second author after the committer", tree + author + committer + "author mallory <m@x> 1 +0000\n\nm\n", "2 author headers"},
		{"two committers", tree + author + committer + committer + "\nm\n", "2 committer headers"},
		{"no author", tree + committer + "\nm\n", "no author header"},
		{"no committer", tree + author + "\nm\n", "no committer header"},
		{"committer first", tree + committer + author + "\nm\n", "no author header"},
		{"an encoding", tree + author + committer + "encoding ISO-8859-1\n\nm\n", "an encoding header"},
	} {
		err := CheckCommitHeaders([]byte(c.body))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (!errors.Is(err, ErrMalformedObject) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: CheckCommitHeaders = %v; want %q", c.name, err, c.want)
		}
		// The normal reader still reads them all, as before.
		if _, err := ParseCommit(plumbing.ZeroHash, []byte(c.body)); err != nil {
			t.Errorf("%s: ParseCommit: %v", c.name, err)
		}
	}
}

// FuzzCheckCommitHeaders: a commit CheckCommitHeaders lets through names
// one author and one committer, so ParseCommit's (the first) are git's
// (the last).
func FuzzCheckCommitHeaders(f *testing.F) {
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@agents.invalid> 1700000000 +0000\ncommitter a <a@agents.invalid> 1700000000 +0000\n\nm\n"))
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor m <m> 1 +0000\nauthor a <a> 1 +0000\ncommitter a <a> 1 +0000\n\nm\n"))
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a> 1 +0000\ncommitter a <a> 1 +0000\nencoding latin1\n\nm\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		if CheckCommitHeaders(body) != nil {
			return
		}
		c, err := ParseCommit(plumbing.ZeroHash, body)
		if err != nil {
			return
		}
		hs, _ := splitHeaders(body)
		var last Signature
		n := 0
		for _, h := range hs {
			if h.key == "author" {
				last, n = parseSignature(h.value), n+1
			}
		}
		if n != 1 || last.Name != c.Author.Name || last.Email != c.Author.Email || !last.When.Equal(c.Author.When) {
			t.Fatalf("%d authors; the last %+v, ParseCommit's %+v", n, last, c.Author)
		}
	})
}
