package pybridge

import "testing"

// A send settles although the hook its resume runs raised: the write's
// end (the response complete, a waiting receive told) or the client's
// departure, each telling a receive whose future refuses. Before, the
// resume logged the hook's error and left the send's future pending: the
// app hung on its await.
func TestASGISendSettlesWhenAHookRaises(t *testing.T) {
	for _, c := range []struct {
		path      string
		failAfter int
		want      string
	}{
		{"/written-raises", 0, "sent"},
		{"/gone-raises", 1, "ClientDisconnected"},
	} {
		t.Run(c.path[1:], func(t *testing.T) {
			// asyncio's loop only: the app swaps the loop's create_future,
			// which uvloop's does not allow.
			s := startASGI(t, "asgi_settle_app:app", ASGIOptions{Loop: LoopAsyncio})
			j := s.job(t, "GET "+c.path+" HTTP/1.1\r\nHost: x\r\n\r\n")
			j.Writer = &recorder{failAfter: c.failAfter}
			s.run(j)
			if seen := string(s.get(t, "/seen").Response.Body()); seen != c.want {
				t.Fatalf("the app's send: %q, want %q", seen, c.want)
			}
		})
	}
}
