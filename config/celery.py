"""The Celery application. Tasks live in ``facilitation.tasks`` and ``channels_bridge``."""
import gc
import os
import warnings

from celery import Celery
from celery.platforms import SecurityWarning
from celery.signals import worker_ready

from config import env as E

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

if E.EMBEDDED:
    # The embedded runtime runs its worker as whoever started it (often root in a container);
    # the warning addresses operators of shared machines, not this setup.
    warnings.filterwarnings("ignore", category=SecurityWarning)

app = Celery("convene")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _settle_the_heap(**_):
    """What the worker loaded to start (Django, the apps, the SDKs) stays for the life of the process:
    moved out of the garbage collector's view, so that a full collection in the middle of a step walks
    only what the steps made."""
    gc.collect()
    gc.freeze()
