// WebSocket checks with Node's ws client (the version tests/package.json
// pins), run by tests/websocket_node_test.go against m0serve: one line per
// check, "name ok" or "name FAIL detail". Usage: node ws_node_client.js URL
"use strict";

const WebSocket = require("ws");

const url = process.argv[2];
const results = [];
const check = (name, ok, detail) => results.push(`${name} ${ok ? "ok" : "FAIL " + detail}`);

// open connects with the options given and resolves once it is open.
function open(options) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ["chat.v1"], options);
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

// next resolves with the next message (data, isBinary).
function next(ws) {
  return new Promise((resolve, reject) => {
    ws.once("message", (data, isBinary) => resolve({ data, isBinary }));
    ws.once("close", (code) => reject(new Error(`closed with ${code}`)));
  });
}

// closed resolves with the code and reason of the close handshake.
function closed(ws) {
  return new Promise((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
}

async function main() {
  // ws offers permessage-deflate by default and compresses messages of
  // 1 KiB and more.
  let ws = await open({ maxPayload: 0 });
  check("deflate-negotiated", ws.extensions.startsWith("permessage-deflate"), ws.extensions);
  check("subprotocol", ws.protocol === "chat.v1", ws.protocol);

  ws.send("héllo ✓");
  let m = await next(ws);
  check("text", !m.isBinary && m.data.toString() === "héllo ✓", m.data.toString());

  const bytes = Buffer.from([0, 1, 2, 253, 254, 255]);
  ws.send(bytes);
  m = await next(ws);
  check("binary", m.isBinary && m.data.equals(bytes), m.data.toString("hex"));

  const big = "compress me ".repeat(20000);
  ws.send(big);
  m = await next(ws);
  check("deflate-echo", !m.isBinary && m.data.toString() === big, `${m.data.length} bytes`);

  // One message in three frames: fin false, false, true.
  ws.send("frag", { fin: false });
  ws.send("mented ", { fin: false });
  ws.send("text", { fin: true });
  m = await next(ws);
  check("fragmented", m.data.toString() === "fragmented text", m.data.toString());

  const pong = new Promise((resolve) => ws.once("pong", resolve));
  ws.ping("are you there");
  const pongData = await pong;
  check("ping", pongData.toString() === "are you there", pongData.toString());

  let done = closed(ws);
  ws.close(4001, "bye");
  let c = await done;
  check("close-4001", c.code === 4001, `${c.code} ${c.reason}`);

  ws = await open({ perMessageDeflate: false });
  done = closed(ws);
  ws.close(1000);
  c = await done;
  check("close-1000", c.code === 1000, `${c.code}`);

  // Over the server's --ws-max-size (1 MiB in the test): 1009.
  ws = await open({ perMessageDeflate: false });
  done = closed(ws);
  ws.send(Buffer.alloc((1 << 20) + 1));
  c = await done;
  check("too-big", c.code === 1009, `${c.code}`);

  console.log(results.join("\n"));
}

main().catch((err) => {
  console.log(results.join("\n"));
  console.log("error FAIL " + err.message);
  process.exit(1);
});
