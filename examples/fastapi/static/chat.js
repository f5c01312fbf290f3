// The chat page's client: joins /ws with a name, shows what arrives,
// sends what is typed. Served from /static/ by m0serve or nginx.
"use strict";
const log = document.getElementById("log");
function show(text) {
  const item = document.createElement("li");
  item.textContent = text;
  log.appendChild(item);
}
document.getElementById("join").addEventListener("submit", (event) => {
  event.preventDefault();
  const name = document.getElementById("name").value;
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(`${scheme}//${location.host}/ws?name=${encodeURIComponent(name)}`);
  socket.onmessage = (message) => {
    const data = JSON.parse(message.data);
    if (data.event) {
      show(`* ${data.name} ${data.event === "join" ? "joined" : "left"} (${data.members} here)`);
    } else {
      show(`${data.from}: ${data.text}`);
    }
  };
  socket.onclose = () => show("* disconnected");
  const say = document.getElementById("say");
  say.hidden = false;
  event.target.hidden = true;
  say.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = document.getElementById("text");
    socket.send(text.value);
    text.value = "";
  });
});
