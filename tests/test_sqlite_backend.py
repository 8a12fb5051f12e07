"""The SQLite backend: threads of one process queue for the write lock and always give it back."""
import threading
import time

import pytest
from django.db import connection, connections, transaction

from config.sqlite import base as backend
from rooms.models import Role

pytestmark = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite backend only")


def _lock():
    return backend._writer_lock(str(connection.settings_dict["NAME"]))


@pytest.mark.django_db(transaction=True)
def test_a_second_writer_waits_for_the_first_to_commit_then_goes_through():
    order = []
    inside = threading.Event()

    def second():
        inside.wait(5)
        with transaction.atomic():
            order.append("second began")
            Role.objects.create(key="second", name="Second")
        connections.close_all()

    thread = threading.Thread(target=second)
    thread.start()
    with transaction.atomic():
        Role.objects.create(key="first", name="First")
        assert _lock().locked()  # the transaction holds the process's writer lock
        inside.set()
        time.sleep(0.3)  # the other thread is queued on the process's lock meanwhile
        order.append("first commits")
    thread.join(10)
    assert order == ["first commits", "second began"]
    assert set(Role.objects.filter(key__in=["first", "second"]).values_list("key", flat=True)) == {"first", "second"}
    assert not _lock().locked()


@pytest.mark.django_db(transaction=True)
def test_the_lock_is_given_back_after_a_rollback_and_after_an_error():
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            Role.objects.create(key="gone", name="Gone")
            assert _lock().locked()
            raise RuntimeError("boom")
    assert not _lock().locked()
    assert not Role.objects.filter(key="gone").exists()
    with transaction.atomic():
        Role.objects.create(key="kept", name="Kept")
    assert not _lock().locked()


@pytest.mark.django_db(transaction=True)
def test_a_writer_that_cannot_get_the_lock_in_time_still_goes_ahead(settings):
    lock = _lock()
    lock.acquire()  # held by someone who never gives it back
    try:
        connection.settings_dict["OPTIONS"] = {**connection.settings_dict["OPTIONS"], "timeout": 0.2}
        started = time.monotonic()
        with transaction.atomic():
            Role.objects.create(key="late", name="Late")
        assert time.monotonic() - started >= 0.2
        assert Role.objects.filter(key="late").exists()
    finally:
        connection.settings_dict["OPTIONS"] = {**connection.settings_dict["OPTIONS"], "timeout": 30}
        lock.release()


@pytest.mark.django_db
def test_the_cursor_rewrites_placeholders_like_djangos_and_remembers_them():
    from django.db.backends.sqlite3.base import SQLiteCursorWrapper

    with connection.cursor() as cursor:
        assert isinstance(cursor.cursor, backend.CursorWrapper)
        query = "SELECT %s, '100%%', %s"
        for _ in range(2):
            cursor.execute(query, [1, "two"])
            assert cursor.fetchone() == (1, "100%", "two")
        named = "SELECT %(a)s, %(b)s"
        cursor.execute(named, {"a": 3, "b": 4})
        assert cursor.fetchone() == (3, 4)
    assert backend._qmark(query) == SQLiteCursorWrapper.convert_query(None, query)
    assert backend._qmark.cache_info().hits >= 1


@pytest.mark.django_db(transaction=True)  # outside a transaction, as a worker runs its tasks
def test_a_worker_thread_keeps_its_connection_from_task_to_task():
    """Celery's Django fixup would close it around every task; opening a SQLite connection again cost more
    than a step's statements."""
    from types import SimpleNamespace

    from celery.fixups.django import DjangoWorkerFixup

    from config.celery import app

    fixup = DjangoWorkerFixup(app)
    connection.ensure_connection()
    kept = connection.connection
    task = SimpleNamespace(request=SimpleNamespace(is_eager=False))
    for _ in range(20):
        fixup.on_task_prerun(task)
        fixup.on_task_postrun(task)
    assert connection.connection is kept


@pytest.mark.django_db
@pytest.mark.parametrize("lookup, value, found", [
    ("name__iexact", "über planung", True), ("name__icontains", "ÜBER", True), ("name__icontains", "ελληνικά", True),
    ("name__istartswith", "über", True), ("name__iendswith", "ΕΛΛΗΝΙΚΆ", True), ("name__icontains", "PLANUNG ε", True),
    ("name__icontains", "ü%", False), ("name__icontains", "_ber", False),  # LIKE's wildcards are still text
])
def test_comparisons_without_case_fold_letters_of_every_script(lookup, value, found):
    Role.objects.create(key="umlaut", name="Über Planung Ελληνικά" if "iexact" not in lookup else "Über Planung")
    assert Role.objects.filter(**{lookup: value}).exists() is found


@pytest.mark.django_db
def test_a_caseless_comparison_with_an_expression_folds_it_too():
    from django.db.models import F, Value
    from django.db.models.functions import Concat

    Role.objects.create(key="greek", name="ΑΒΓ δεκα", function="αβγ")
    assert Role.objects.filter(name__istartswith=F("function")).exists()
    assert Role.objects.filter(name__icontains=Concat(Value("Δ"), Value("ΕΚΑ"))).exists()
