package grant

import (
	"testing"
)

// Grants the Mojo m0serve 1.16.0's m0serve.grant issued with the key
// "secretkey123": the wire this package verifies.
const (
	seedKey     = "secretkey123"
	seedGrant   = "v1.dd02b8d0.1796312093.news.-.r5vzoFiX9Zf1YmQVcYzm_IsaS6f8ML87KaB5UwHjVSA"
	seedBound   = "v1.dd02b8d0.1796312093.news.ungWv48Bz-pBQUDeXa4iIw.DFa2Nxp1PxgZCnTKaPcw_-Pgc00ZxW1r3wh7HtmbVOQ" // session "abc"
	seedExpires = 1796312093
)

func TestVerifySeedGrants(t *testing.T) {
	v, err := NewVerifier(seedKey, "")
	if err != nil {
		t.Fatal(err)
	}
	now := int64(seedExpires - 10)
	for _, c := range []struct {
		name       string
		grant      string
		now        int64
		session    string
		hasSession bool
		want       Refusal
	}{
		{"valid", seedGrant, now, "", false, OK},
		{"valid at its last second", seedGrant, seedExpires, "", false, OK},
		{"expired", seedGrant, seedExpires + 1, "", false, Expired},
		{"bound, with its session", seedBound, now, "abc", true, OK},
		{"bound, no cookie", seedBound, now, "", false, NoSessionCookie},
		{"bound, another session", seedBound, now, "abd", true, SessionMismatch},
		{"bound and expired", seedBound, seedExpires + 1, "", false, Expired},
		{"tampered channel", "v1.dd02b8d0.1796312093.newz.-.r5vzoFiX9Zf1YmQVcYzm_IsaS6f8ML87KaB5UwHjVSA", now, "", false, BadSignature},
		{"tampered expiry", "v1.dd02b8d0.1796312094.news.-.r5vzoFiX9Zf1YmQVcYzm_IsaS6f8ML87KaB5UwHjVSA", now, "", false, BadSignature},
		{"another key's id", "v1.dd02b8d1.1796312093.news.-.r5vzoFiX9Zf1YmQVcYzm_IsaS6f8ML87KaB5UwHjVSA", now, "", false, UnknownKey},
		{"empty", "", now, "", false, NoGrant},
		{"v2", "v2.dd02b8d0.1796312093.news.-.r5vzoFiX9Zf1YmQVcYzm_IsaS6f8ML87KaB5UwHjVSA", now, "", false, Malformed},
		{"short kid", "v1.dd02b8d.1796312093.news.-.r5vzoFiX9Zf1YmQVcYzm_IsaS6f8ML87KaB5UwHjVSA", now, "", false, Malformed},
		{"signed expiry", "v1.dd02b8d0.-5.news.-.r5vzoFiX9Zf1YmQVcYzm_IsaS6f8ML87KaB5UwHjVSA", now, "", false, Malformed},
		{"channel not allowed", "v1.dd02b8d0.1796312093.ne!ws.-.r5vzoFiX9Zf1YmQVcYzm_IsaS6f8ML87KaB5UwHjVSA", now, "", false, Malformed},
		{"seven fields", "v1.dd02b8d0.1796312093.news.x.-.r5vzoFiX9Zf1YmQVcYzm_IsaS6f8ML87KaB5UwHjVSA", now, "", false, Malformed},
		{"padded signature", seedGrant + "=", now, "", false, Malformed},
		{"short binding", "v1.dd02b8d0.1796312093.news.abc.r5vzoFiX9Zf1YmQVcYzm_IsaS6f8ML87KaB5UwHjVSA", now, "", false, Malformed},
	} {
		channel, got := v.Verify([]byte(c.grant), c.now, []byte(c.session), c.hasSession)
		if got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if got == OK && string(channel) != "news" {
			t.Errorf("%s: channel %q", c.name, channel)
		}
	}
	if string(Channel([]byte(seedBound))) != "news" {
		t.Errorf("Channel(%q) = %q", seedBound, Channel([]byte(seedBound)))
	}
}

func TestVerifyPreviousKey(t *testing.T) {
	v, err := NewVerifier("newkey", seedKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, r := v.Verify([]byte(seedGrant), seedExpires, nil, false); r != OK {
		t.Fatalf("a grant of the previous key: %v", r)
	}
	v, _ = NewVerifier("newkey", "")
	if _, r := v.Verify([]byte(seedGrant), seedExpires, nil, false); r != UnknownKey {
		t.Fatalf("a grant of a retired key: %v", r)
	}
	if _, err := NewVerifier("", seedKey); err != ErrNoKey {
		t.Fatalf("no current key: %v", err)
	}
}

func TestBodies(t *testing.T) {
	if got := string(NoGrant.Body()); got != `{"error":"invalid","reason":"no grant"}` {
		t.Error(got)
	}
	if got := string(Expired.Body()); got != `{"error":"expired","reason":"expired"}` {
		t.Error(got)
	}
}

func TestFromQueryAndCookie(t *testing.T) {
	buf := make([]byte, 0, MaxLen+1)
	for _, c := range []struct {
		query, want string
		found       bool
	}{
		{"g=abc", "abc", true},
		{"x=1&g=a%3Ab", "a:b", true},
		{"g=first&g=last", "last", true},
		{"G=abc", "", false},
		{"", "", false},
		{"g=", "", true},
	} {
		got, found := FromQuery(buf, []byte(c.query))
		if string(got) != c.want || found != c.found {
			t.Errorf("FromQuery(%q) = %q, %v", c.query, got, found)
		}
	}
	long := make([]byte, 3*MaxLen)
	for i := range long {
		long[i] = 'a'
	}
	if got, _ := FromQuery(buf, append([]byte("g="), long...)); len(got) != MaxLen+1 {
		t.Errorf("a long grant came back %d bytes", len(got))
	}
	if v, ok := CookieValue([]byte("a=1; sessionid=abc; b=2"), "sessionid"); !ok || string(v) != "abc" {
		t.Errorf("CookieValue: %q %v", v, ok)
	}
	if _, ok := CookieValue([]byte("xsessionid=abc"), "sessionid"); ok {
		t.Error("CookieValue matched a longer name")
	}
}

func TestVerifyAllocatesNothing(t *testing.T) {
	v, _ := NewVerifier(seedKey, "x")
	grant, bound, session := []byte(seedGrant), []byte(seedBound), []byte("abc")
	allocs := testing.AllocsPerRun(100, func() {
		v.Verify(grant, seedExpires, nil, false)
		v.Verify(bound, seedExpires, session, true)
		v.Verify(bound, seedExpires+1, session, true)
	})
	if allocs != 0 {
		t.Fatalf("Verify allocates %v times a run", allocs)
	}
}

func BenchmarkVerify(b *testing.B) {
	v, _ := NewVerifier(seedKey, "")
	grant := []byte(seedGrant)
	b.ReportAllocs()
	for b.Loop() {
		v.Verify(grant, seedExpires, nil, false)
	}
}
