"""Django Channels consumers for tests/channels_test.go: a synchronous
echo consumer (channels runs it on asgiref's thread executor) and an
asynchronous room that broadcasts through the in-memory channel layer."""

from channels.generic.websocket import AsyncJsonWebsocketConsumer, WebsocketConsumer


class EchoConsumer(WebsocketConsumer):
    def connect(self):
        self.accept()

    def receive(self, text_data=None, bytes_data=None):
        if text_data == "close":
            self.close(code=4006)
        elif text_data is not None:
            self.send(text_data="echo " + text_data + " as " + self.scope["url_route"]["kwargs"]["who"])
        else:
            self.send(bytes_data=bytes_data[::-1])


class RoomConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        self.room = "room-" + self.scope["url_route"]["kwargs"]["room"]
        await self.channel_layer.group_add(self.room, self.channel_name)
        await self.accept()

    async def disconnect(self, code):
        await self.channel_layer.group_discard(self.room, self.channel_name)

    async def receive_json(self, content):
        await self.channel_layer.group_send(self.room, {"type": "room.message", "text": content["text"]})

    async def room_message(self, event):
        await self.send_json({"text": event["text"]})
