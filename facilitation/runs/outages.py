"""A step's database work across a short outage (a restart, a failover, a locked SQLite file).

A model call outlives a database restart: its lease checks let it go on while the database is away
(``registry.StepRun.abandoned``). Its commit, once the call is back, may then meet the outage
itself; ``rides_out`` tries the commit again every ``PAUSE_SECONDS`` for up to ``OUTAGE_SECONDS``
instead of failing the step, whose claim would then block the room until its lease lapsed. A commit
is guarded by its lease, so trying it again never writes twice: if the first try did commit after
all, the next one finds the lease moved on and writes nothing; nor does the handler keep the call as
discarded, since the attempt's own invocation is in (``record_discarded_call``, ``rounds.commit_agent``).
The read of the room right after a claim (``leases.claim_step``) rides out an outage the same way:
the claim holds the step meanwhile.
"""
import functools
import logging
import time

from django.db import InterfaceError, OperationalError, connection

log = logging.getLogger("convene.engine")

OUTAGE_SECONDS = 10.0
PAUSE_SECONDS = 0.5
_sleep = time.sleep
_clock = time.monotonic


def rides_out(commit):
    """Decorate a step's commit (a function that opens its own transaction), or a read outside any
    transaction, to outlast a short outage."""
    @functools.wraps(commit)
    def riding(*args, **kwargs):
        deadline = _clock() + OUTAGE_SECONDS
        while True:
            try:
                return commit(*args, **kwargs)
            except (OperationalError, InterfaceError):
                if connection.in_atomic_block or _clock() >= deadline:
                    raise  # inside someone else's transaction, or the database stays away
                log.warning("%s met a database error; tried again in %s s", commit.__name__, PAUSE_SECONDS, exc_info=True)
                connection.close()  # a broken connection is opened anew
                _sleep(PAUSE_SECONDS)

    return riding
