"""The project's ASGI entry through Django Channels: HTTP goes to
Django's ASGI handler, WebSockets through channels' URLRouter to the
consumers in djsite.consumers."""

import os

os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'djsite.settings')

from django.core.asgi import get_asgi_application  # noqa: E402

# Django is set up before the consumers (and the models they may reach)
# are imported, as channels' documentation prescribes.
django_application = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

from djsite.consumers import EchoConsumer, RoomConsumer  # noqa: E402

application = ProtocolTypeRouter({
    'http': django_application,
    'websocket': URLRouter([
        path('ws/echo/<str:who>/', EchoConsumer.as_asgi()),
        path('ws/room/<str:room>/', RoomConsumer.as_asgi()),
    ]),
})
