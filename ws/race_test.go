//go:build race

package ws

// raceEnabled: the race detector drops sync.Pool items at random, so a
// pooled compressor allocates now and then.
const raceEnabled = true
