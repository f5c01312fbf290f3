// Package ws speaks the WebSocket protocol, RFC 6455, with the
// permessage-deflate extension, RFC 7692, for a server.
//
// It is pure Go: no syscalls, no goroutines, no connection of its own. The
// caller owns the bytes: it feeds what it has read, in whatever pieces it
// was read, and appends what it will write to its own buffers. In steady
// state nothing allocates per frame.
//
// The parts, from the wire up:
//
//   - Request and Accept run the server's side of the opening handshake
//     (§4.2.1): GET, HTTP/1.1 or later, a Host, Upgrade listing
//     "websocket" and Connection listing "upgrade" (token lists, any case,
//     RFC 9110 §5.6.1), exactly one Sec-WebSocket-Key that is base64 for
//     16 bytes, and Sec-WebSocket-Version 13. A refusal is a
//     HandshakeError: 400, or 426 with "Sec-WebSocket-Version: 13" for
//     another version (§4.2.2 item 4). AcceptKey derives
//     Sec-WebSocket-Accept (§1.3), Handshake.AppendResponse writes the 101
//     head, Request.Protocols and OffersProtocol read the subprotocols
//     (§4.2.1 item 8), and ParseExtensions walks Sec-WebSocket-Extensions
//     (§9.1).
//   - Decoder reads client frames (§5.2) from pieces of any size: a header
//     split across reads is kept and finished, payload comes back as
//     chunks unmasked in place (§5.3, a 64-bit word at a time) in the
//     caller's buffer. It fails the connection, with the close code of
//     the rule broken, on: a reserved opcode (§5.2), RSV2 or RSV3, RSV1
//     unless permessage-deflate was negotiated and the frame starts a data
//     message (RFC 7692 §6.1), an unmasked frame (§5.1), a control frame
//     over 125 bytes or without FIN (§5.5), a 64-bit length with its top
//     bit set (§5.2), a continuation with no message to continue or a new
//     data frame inside one (§5.4), and a message whose declared frame
//     lengths pass the size limit (1009), checked from each header before
//     any of its payload is taken. Control frames may come between a
//     message's fragments (§5.4). Lengths need not use the fewest bytes:
//     the rule binds senders, and browsers keep it anyway.
//   - Reader joins a Decoder's chunks into whole messages, for a consumer
//     such as the Python bridge: text is validated as it arrives (§8.1,
//     UTF8), so a bad byte fails with 1007 before the message ends; Close
//     payloads are read by ParseClose (§5.5.1, §7.4: 1005, 1006 and 1015
//     are never on the wire, a reason is valid UTF-8); a message whole in
//     one feed is returned in place.
//   - AppendHeader, AppendFrame, AppendMessage and AppendClose write
//     server frames, unmasked (§5.1). AppendClose never sends 1005, 1006
//     or 1015 and cuts a reason to 123 bytes on a character boundary.
//   - permessage-deflate (RFC 7692): the server answers an offer with
//     server_no_context_takeover and client_no_context_takeover (§7.1.1),
//     so every message is compressed and inflated on its own and one
//     Deflater and one Inflater serve all the connections of a thread; a
//     connection keeps no compression state. Offers with unknown,
//     repeated or bad parameters are declined (§7.1), as are those
//     limiting the server's window below 15 bits. Messages under
//     MinCompress bytes, and those that do not shrink, go out plain. The
//     sender's 0x00 0x00 0xff 0xff tail is removed and put back
//     (§7.2.1, §7.2.2), and inflating stops at the message size limit
//     (1009), so a small message cannot inflate into a large one.
//
// Every decoding error is an *Error carrying the close code to fail the
// connection with (§7.1.7), and is final for its Decoder or Reader.
package ws
