// note-verify: an independent check of what Scriptorium's nodes and witness write, with Go's
// golang.org/x/mod/sumdb/note (C2SP signed notes) and golang.org/x/mod/sumdb/tlog (RFC 6962 proofs).
// It reads one JSON request on stdin and prints one JSON verdict on stdout (exit 0 when every check holds, 1 when
// one does not, 2 on a bad request):
//
//	{"note": "<signed checkpoint>",
//	 "log_keys": ["<origin>+<id>+<base64 0x01 key>", ...], "log_quorum": 3,
//	 "witness_keys": ["<name>+<id>+<base64 0x04 key>", ...],
//	 "inclusion": [{"index": 7, "leaf_data": "<hex>", "proof": ["<hex>", ...]}],
//	 "consistency": [{"from": 5, "from_root": "<hex>", "proof": ["<hex>", ...]}]}
//
// Log keys are standard Ed25519 note keys (note.NewVerifier). x/mod knows no cosignature keys (type 0x04), so the
// cosignature verifier is written here from c2sp.org/tlog-cosignature: Ed25519 over "cosignature/v1\ntime <t>\n"
// and the note text, the signature bytes being the 8-byte big-endian time and the signature.
package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type request struct {
	Note        string   `json:"note"`
	LogKeys     []string `json:"log_keys"`
	LogQuorum   int      `json:"log_quorum"`
	WitnessKeys []string `json:"witness_keys"`
	Inclusion   []struct {
		Index    int64    `json:"index"`
		LeafData string   `json:"leaf_data"`
		Proof    []string `json:"proof"`
	} `json:"inclusion"`
	Consistency []struct {
		From     int64    `json:"from"`
		FromRoot string   `json:"from_root"`
		Proof    []string `json:"proof"`
	} `json:"consistency"`
}

type verdict struct {
	OK            bool     `json:"ok"`
	Origin        string   `json:"origin"`
	Size          int64    `json:"size"`
	LogSignatures int      `json:"log_signatures"`
	Cosigned      []string `json:"cosigned"`
	Errors        []string `json:"errors"`
}

// cosignatureVerifier is a note.Verifier for tlog-cosignature/v1 keys.
type cosignatureVerifier struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

func (v *cosignatureVerifier) Name() string    { return v.name }
func (v *cosignatureVerifier) KeyHash() uint32 { return v.hash }
func (v *cosignatureVerifier) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	signed := fmt.Appendf(nil, "cosignature/v1\ntime %d\n%s", t, msg)
	return ed25519.Verify(v.key, signed, sig[8:])
}

func newCosignatureVerifier(vkey string) (note.Verifier, error) {
	name, rest, _ := strings.Cut(vkey, "+")
	id, key64, _ := strings.Cut(rest, "+")
	hash, err := strconv.ParseUint(id, 16, 32)
	key, err2 := base64.StdEncoding.DecodeString(key64)
	if err != nil || err2 != nil || len(id) != 8 || len(key) != 33 || key[0] != 0x04 {
		return nil, errors.New("malformed cosignature verifier key")
	}
	h := sha256.New()
	h.Write([]byte(name + "\n"))
	h.Write(key)
	if binary.BigEndian.Uint32(h.Sum(nil)) != uint32(hash) {
		return nil, errors.New("cosignature verifier key: key id mismatch")
	}
	return &cosignatureVerifier{name: name, hash: uint32(hash), key: ed25519.PublicKey(key[1:])}, nil
}

func hashOf(s string) (tlog.Hash, error) {
	var h tlog.Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != tlog.HashSize {
		return h, errors.New("not a 32-byte hex hash")
	}
	copy(h[:], b)
	return h, nil
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "note-verify: bad request:", err)
		os.Exit(2)
	}
	out := verdict{Cosigned: []string{}, Errors: []string{}}
	fail := func(format string, args ...any) { out.Errors = append(out.Errors, fmt.Sprintf(format, args...)) }

	var verifiers []note.Verifier
	for _, k := range req.LogKeys {
		v, err := note.NewVerifier(k)
		if err != nil {
			fail("log key %q: %v", k, err)
			continue
		}
		verifiers = append(verifiers, v)
	}
	witnesses := map[string]bool{}
	for _, k := range req.WitnessKeys {
		v, err := newCosignatureVerifier(k)
		if err != nil {
			fail("witness key %q: %v", k, err)
			continue
		}
		verifiers = append(verifiers, v)
		witnesses[v.Name()] = true
	}
	n, err := note.Open([]byte(req.Note), note.VerifierList(verifiers...))
	if err != nil {
		fail("note.Open: %v", err)
	} else {
		for _, s := range n.Sigs {
			if witnesses[s.Name] {
				out.Cosigned = append(out.Cosigned, s.Name)
			} else {
				out.LogSignatures++
			}
		}
		if out.LogSignatures < req.LogQuorum {
			fail("%d log signatures verify, the quorum is %d", out.LogSignatures, req.LogQuorum)
		}
		lines := strings.SplitN(n.Text, "\n", 4)
		size, err1 := strconv.ParseInt(lines[1], 10, 64)
		root, err2 := base64.StdEncoding.DecodeString(lines[2])
		if len(lines) < 4 || err1 != nil || err2 != nil || len(root) != tlog.HashSize {
			fail("not a checkpoint: %q", n.Text)
		} else {
			out.Origin, out.Size = lines[0], size
			var th tlog.Hash
			copy(th[:], root)
			for _, inc := range req.Inclusion {
				data, err := hex.DecodeString(inc.LeafData)
				proof, err2 := proofOf(inc.Proof)
				if err != nil || err2 != nil {
					fail("inclusion of %d: unreadable", inc.Index)
					continue
				}
				if err := tlog.CheckRecord(proof, size, th, inc.Index, tlog.RecordHash(data)); err != nil {
					fail("inclusion of leaf %d in %d: %v", inc.Index, size, err)
				}
			}
			for _, c := range req.Consistency {
				from, err := hashOf(c.FromRoot)
				proof, err2 := proofOf(c.Proof)
				if err != nil || err2 != nil {
					fail("consistency from %d: unreadable", c.From)
					continue
				}
				if err := tlog.CheckTree(tlog.TreeProof(proof), size, th, c.From, from); err != nil {
					fail("consistency from %d to %d: %v", c.From, size, err)
				}
			}
		}
	}
	out.OK = len(out.Errors) == 0
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		os.Exit(2)
	}
	if !out.OK {
		os.Exit(1)
	}
}

func proofOf(hexes []string) (tlog.RecordProof, error) {
	proof := make(tlog.RecordProof, 0, len(hexes))
	for _, s := range hexes {
		h, err := hashOf(s)
		if err != nil {
			return nil, err
		}
		proof = append(proof, h)
	}
	return proof, nil
}

