package ws

import "encoding/binary"

// Unmask XORs b in place with the masking key (§5.3), where b starts at
// byte offset of the frame's payload: the key is rotated to that offset,
// so a payload unmasked in pieces as it arrives gives the same bytes as
// one call over the whole. It works a 64-bit word at a time.
func Unmask(b []byte, key [4]byte, offset int64) {
	o := int(offset & 3)
	k := [4]byte{key[o], key[(o+1)&3], key[(o+2)&3], key[(o+3)&3]}
	i := 0
	if len(b) >= 8 {
		k32 := uint64(binary.LittleEndian.Uint32(k[:]))
		k64 := k32<<32 | k32
		for ; i+32 <= len(b); i += 32 {
			w := b[i : i+32 : i+32]
			binary.LittleEndian.PutUint64(w[0:], binary.LittleEndian.Uint64(w[0:])^k64)
			binary.LittleEndian.PutUint64(w[8:], binary.LittleEndian.Uint64(w[8:])^k64)
			binary.LittleEndian.PutUint64(w[16:], binary.LittleEndian.Uint64(w[16:])^k64)
			binary.LittleEndian.PutUint64(w[24:], binary.LittleEndian.Uint64(w[24:])^k64)
		}
		for ; i+8 <= len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k64)
		}
	}
	// i is a multiple of 8, so the rotated key still lines up at i.
	for ; i < len(b); i++ {
		b[i] ^= k[i&3]
	}
}
