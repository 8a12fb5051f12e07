"""The Celery application. Tasks live in ``facilitation.tasks`` and ``channels_bridge``."""
import os
import warnings

from celery import Celery
from celery.platforms import SecurityWarning

from config import env as E

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

if E.EMBEDDED:
    # The embedded runtime runs its worker as whoever started it (often root in a container);
    # the warning addresses operators of shared machines, not this setup.
    warnings.filterwarnings("ignore", category=SecurityWarning)

app = Celery("convene")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
