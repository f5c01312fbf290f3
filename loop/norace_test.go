//go:build !race

package loop

const raceEnabled = false
