"""
WSGI config for djsite project.

It exposes the WSGI callable as a module-level variable named ``application``.

For more information on this file, see
https://docs.djangoproject.com/en/3.2/howto/deployment/wsgi/
"""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'djsite.settings')

application = get_wsgi_application()

# The m0serve tests serve this app under wsgiref's PEP 3333 validator,
# its warnings made errors.
import warnings  # noqa: E402
from wsgiref.validate import WSGIWarning, validator  # noqa: E402

warnings.simplefilter('error', WSGIWarning)
application = validator(application)
