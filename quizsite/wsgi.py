import os

from django.core.wsgi import get_wsgi_application

from quizsite.startup import settings_load_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings.local")
settings_load_or_exit()  # a refused configuration: one line and exit 1, not the server's import traceback
application = get_wsgi_application()
