package mem

import (
	"fmt"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// chunkSize is the size of the byte slices a chain keeps its receipts in.
const chunkSize = 64 << 10

// chain is one owner's receipts, kept in their stored form
// (receipt.LinkAppend) in a few large byte slices: the garbage collector
// marks each slice without scanning it, where receipts kept as structs
// would have it walk every map and string of every receipt at every
// cycle (the larger part of a decision's cost once a chain is long).
type chain struct {
	owner  intent.Owner
	seq    uint64       // the newest receipt's Seq, which the next one follows
	head   receipt.Hash // and its Hash
	chunks [][]byte     // full but for the last; a receipt that does not fit has one of its own; the first grows up to chunkSize
	at     []span       // where receipt Seq i+1 is
}

// span locates a stored receipt in a chain's chunks.
type span struct {
	chunk, off, n uint32
}

// append links r after the head and keeps it; on success it calls added
// before returning (Append uses it to register a new chain only once it
// holds a receipt).
func (c *chain) append(r receipt.Receipt, added func()) (receipt.Receipt, error) {
	var prev *receipt.Receipt
	if len(c.at) > 0 {
		// What Link reads of the head: kept as three fields rather than
		// a whole receipt, whose every string and map a copy into the
		// chain would pass through the collector's write barrier.
		prev = &receipt.Receipt{Owner: c.owner, Seq: c.seq, Hash: c.head}
	}
	last := len(c.chunks) - 1
	switch {
	case last < 0:
		// The first chunk grows with append up to chunkSize, so that
		// an owner with a few receipts (most owners of most stores)
		// does not hold a whole chunk.
		c.chunks = append(c.chunks, nil)
		last++
	case cap(c.chunks[last]) >= chunkSize && cap(c.chunks[last])-len(c.chunks[last]) < chunkSize/8:
		c.chunks = append(c.chunks, make([]byte, 0, chunkSize))
		last++
	}
	growing := cap(c.chunks[last]) < chunkSize
	buf := c.chunks[last]
	start := len(buf)
	linked, buf, err := receipt.LinkAppend(buf, r, prev)
	if err != nil {
		return receipt.Receipt{}, err
	}
	if cap(buf) != cap(c.chunks[last]) && start > 0 && !growing {
		// It outgrew a full-size chunk: move it to a chunk of its own,
		// leaving the old one as it was. (A chunk still growing was
		// copied whole by append: its receipts keep their offsets.)
		c.chunks = append(c.chunks, append([]byte(nil), buf[start:]...))
		last++
		start = 0
		buf = c.chunks[last]
	}
	c.chunks[last] = buf
	c.at = append(c.at, span{chunk: uint32(last), off: uint32(start), n: uint32(len(buf) - start)})
	c.owner, c.seq, c.head = linked.Owner, linked.Seq, linked.Hash
	added()
	return linked, nil
}

// receipts decodes the receipts with Seq >= from, at most limit of them
// (0: all).
func (c *chain) receipts(from uint64, limit int) ([]receipt.Receipt, error) {
	i := uint64(0)
	if from > 1 {
		i = from - 1
	}
	if i >= uint64(len(c.at)) {
		return []receipt.Receipt{}, nil
	}
	spans := c.at[i:]
	if limit > 0 && len(spans) > limit {
		spans = spans[:limit]
	}
	out := make([]receipt.Receipt, len(spans))
	for k, sp := range spans {
		if err := out[k].UnmarshalBinary(c.chunks[sp.chunk][sp.off : sp.off+sp.n]); err != nil {
			return nil, fmt.Errorf("mem: receipt %d of %q: %w", i+uint64(k)+1, c.owner, err)
		}
	}
	return out, nil
}
