package http1

import (
	"sync/atomic"
	"time"
)

// DateLen is the length of an IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT".
const DateLen = 29

// DateCache holds the current Date field value, formatted at most once a
// second: formatting it per response cost ~9% of hello-world throughput
// when measured.
//
// The loop calls Tick from its once-a-second sweep; readers on any thread
// take the value with one atomic load and copy 29 bytes, without locks or
// allocation. A new second is published as a fresh immutable stamp (one
// small allocation per second, on the ticking side), so a reader never
// sees a half-written value however long it holds the old one.
//
// The zero value is ready: the first read formats the current time if
// Tick has not run yet. The cache has no goroutine of its own.
type DateCache struct {
	current atomic.Pointer[dateStamp]
}

type dateStamp struct {
	second int64
	text   [DateLen]byte
}

// NewDateCache returns a cache already holding now.
func NewDateCache(now time.Time) *DateCache {
	c := new(DateCache)
	c.Tick(now)
	return c
}

// Tick makes now's second the cached one. Within the second already held
// it does nothing, so calling it more often than once a second is cheap.
// A clock stepped backwards is followed: the Date says what the clock
// says.
func (c *DateCache) Tick(now time.Time) {
	second := now.Unix()
	old := c.current.Load()
	if old != nil && old.second == second {
		return
	}
	stamp := &dateStamp{second: second}
	formatDate(&stamp.text, now)
	// A concurrent Tick that won the race published a stamp at least as
	// fresh as this one; losing is fine.
	c.current.CompareAndSwap(old, stamp)
}

// AppendDate appends the cached IMF-fixdate to dst.
func (c *DateCache) AppendDate(dst []byte) []byte {
	return append(dst, c.stamp().text[:]...)
}

func (c *DateCache) stamp() *dateStamp {
	if s := c.current.Load(); s != nil {
		return s
	}
	c.Tick(time.Now())
	return c.current.Load()
}

// AppendHTTPDate appends t as an IMF-fixdate (RFC 9110 §5.6.7): always
// UTC, written "GMT". Years outside 0-9999 cannot be written in the
// format's four digits; they are written modulo 10000, which no real
// clock reaches.
func AppendHTTPDate(dst []byte, t time.Time) []byte {
	var text [DateLen]byte
	formatDate(&text, t)
	return append(dst, text[:]...)
}

const (
	dayNames   = "SunMonTueWedThuFriSat"
	monthNames = "JanFebMarAprMayJunJulAugSepOctNovDec"
)

func formatDate(text *[DateLen]byte, t time.Time) {
	t = t.UTC()
	year, month, day := t.Date()
	hour, minute, second := t.Clock()
	weekday := int(t.Weekday()) * 3
	m := (int(month) - 1) * 3
	year %= 10000
	if year < 0 {
		year += 10000
	}
	*text = [DateLen]byte{
		dayNames[weekday], dayNames[weekday+1], dayNames[weekday+2], ',', ' ',
		byte('0' + day/10), byte('0' + day%10), ' ',
		monthNames[m], monthNames[m+1], monthNames[m+2], ' ',
		byte('0' + year/1000), byte('0' + year/100%10), byte('0' + year/10%10), byte('0' + year%10), ' ',
		byte('0' + hour/10), byte('0' + hour%10), ':',
		byte('0' + minute/10), byte('0' + minute%10), ':',
		byte('0' + second/10), byte('0' + second%10),
		' ', 'G', 'M', 'T',
	}
}
