"""The Django row: one view returning a JsonResponse, through Django's
request handler, URL resolver and the security and common middleware
(no database, no sessions: what a view of a production site costs above
its own work).

    bin/m0serve --app-dir bench/apps django_hello:application

GET / answers {"message": "Hello, World!"} (json.dumps's separators).
"""
from django.conf import settings

settings.configure(
    DEBUG=False,
    SECRET_KEY="m0serve-bench-not-a-secret",
    ALLOWED_HOSTS=["*"],
    ROOT_URLCONF=__name__,
    MIDDLEWARE=[
        "django.middleware.security.SecurityMiddleware",
        "django.middleware.common.CommonMiddleware",
    ],
    INSTALLED_APPS=[],
    USE_TZ=True,
)

from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import JsonResponse  # noqa: E402
from django.urls import path  # noqa: E402


def hello(request):
    return JsonResponse({"message": "Hello, World!"})


urlpatterns = [path("", hello)]

application = get_wsgi_application()
