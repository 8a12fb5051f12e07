"""The Celery application. Tasks live in ``facilitation.tasks`` and ``channels_bridge``."""
import gc
import os
import warnings

from celery import Celery
from celery.exceptions import CPendingDeprecationWarning
from celery.platforms import SecurityWarning
from celery.signals import celeryd_after_setup, worker_ready

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


@celeryd_after_setup.connect
def _quiet_the_chosen_default(**_):
    """A task in flight when the broker connection drops runs to its end (``CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS``
    is False on purpose: its step's lease makes the redelivered copy a no-op, and cancelling would throw away a
    model call). Celery warns at every connection loss that this default will change; here it is chosen. Added
    once the worker's logging is set up, since that setup shows every pending deprecation."""
    warnings.filterwarnings("ignore", category=CPendingDeprecationWarning, message=r"\s*In Celery 5.1 we introduced")
