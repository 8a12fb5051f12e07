"""Two requests of one owner that take the same agent alias at once: the second waits for the first and
then sees its alias (a 400 on an alias it asked for, the next number on one derived from the name).

Aliases have no unique constraint (agents created before the rule may share one and keep it), so the
check and the save hold the owner's alias lock (``lock_aliases_of``) until the commit. These tests run
on whichever database the suite runs on (SQLite by default, PostgreSQL with ``DATABASE_URL``).
"""
import threading
import time

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from rooms.actions import catalog
from rooms.errors import ValidationFailed
from rooms.models import Agent
from tests.factories import make_user

HOLD = 0.6  # how long the first request keeps its transaction open after saving its agent


def _held_open(monkeypatch) -> tuple[threading.Event, dict]:
    """Make the thread put in the returned dict's ``"thread"`` keep its transaction open for ``HOLD`` seconds
    after saving its agent; the event is set once it has saved it (not yet committed)."""
    saved = threading.Event()
    real_audit = catalog.audit
    holder: dict = {}

    def slow_audit(*args, **kwargs):
        result = real_audit(*args, **kwargs)
        if threading.current_thread() is holder.get("thread"):
            saved.set()
            time.sleep(HOLD)
        return result

    monkeypatch.setattr(catalog, "audit", slow_audit)
    return saved, holder


def _race(monkeypatch, owner, first: dict, second: dict):
    """Create ``first`` and, while its transaction is still open, ``second``; return what each got, and when."""
    saved, first_thread = _held_open(monkeypatch)
    results: dict = {}

    def run(name, fields, wait_for=None):
        try:
            if wait_for is not None:
                assert wait_for.wait(10)
            results[name] = catalog.do_create_agent(owner, **fields)
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            results[name] = exc
        finally:
            results[f"{name}_done"] = time.monotonic()
            connections.close_all()

    a = threading.Thread(target=run, args=("first", first))
    b = threading.Thread(target=run, args=("second", second, saved))
    first_thread["thread"] = a
    a.start()
    b.start()
    a.join(20)
    b.join(20)
    assert not a.is_alive() and not b.is_alive()
    return results


@pytest.mark.django_db(transaction=True)
def test_a_second_create_with_the_same_alias_waits_and_is_refused(monkeypatch):
    owner = make_user("racer")
    results = _race(monkeypatch, owner, {"name": "Architect one", "alias": "architect"},
                    {"name": "Architect two", "alias": "Architect"})
    assert isinstance(results["first"], Agent), results["first"]
    refused = results["second"]
    assert isinstance(refused, ValidationFailed), refused
    assert "Architect one" in refused.details["alias"][0]
    assert results["second_done"] >= results["first_done"] - 0.05  # it waited for the first to commit
    assert list(Agent.objects.filter(created_by=owner).values_list("name", "alias")) == [("Architect one", "architect")]


@pytest.mark.django_db(transaction=True)
def test_a_second_create_with_a_derived_alias_waits_and_gets_the_next_number(monkeypatch):
    owner = make_user("racer")
    results = _race(monkeypatch, owner, {"name": "Architect"}, {"name": "Architect."})
    assert isinstance(results["first"], Agent) and isinstance(results["second"], Agent), results
    assert sorted(Agent.objects.filter(created_by=owner).values_list("alias", flat=True)) == ["architect", "architect-2"]


@pytest.mark.django_db(transaction=True)
def test_a_rename_to_an_alias_being_taken_waits_and_is_refused(monkeypatch):
    owner = make_user("racer")
    mine = Agent.objects.create(name="Reviewer", alias="reviewer", created_by=owner)
    saved, creator = _held_open(monkeypatch)
    outcome = {}

    def create():
        try:
            catalog.do_create_agent(owner, name="Architect", alias="architect")
        finally:
            connections.close_all()

    def rename():
        try:
            assert saved.wait(10)
            catalog.do_update_agent(Agent.objects.get(pk=mine.pk), owner, alias="architect")
            outcome["renamed"] = True
        except ValidationFailed as exc:
            outcome["refused"] = exc
        finally:
            connections.close_all()

    a, b = threading.Thread(target=create), threading.Thread(target=rename)
    creator["thread"] = a
    a.start()
    b.start()
    a.join(20)
    b.join(20)
    assert "refused" in outcome and "Architect" in outcome["refused"].details["alias"][0], outcome
    assert Agent.objects.get(pk=mine.pk).alias == "reviewer"


@pytest.mark.django_db
def test_older_duplicates_keep_their_alias_and_other_owners_are_not_held_up():
    owner, other = make_user("old"), make_user("else")
    Agent.objects.create(name="Ada one", alias="ada", created_by=owner)
    twin = Agent.objects.create(name="Ada two", alias="ada", created_by=owner)  # as rows from before the rule may be
    catalog.do_update_agent(twin, owner, description="still ada", alias="ADA")
    assert Agent.objects.get(pk=twin.pk).alias == "ADA" and Agent.objects.filter(alias__iexact="ada").count() == 2
    assert catalog.do_create_agent(other, name="Ada").alias == "ada"  # aliases are per owner


@pytest.mark.django_db
def test_the_owner_row_is_locked_while_an_alias_is_taken():
    owner = make_user("locker")
    with CaptureQueriesContext(connection) as queries:
        catalog.do_create_agent(owner, name="Locked")
    table = owner._meta.db_table
    locks = [q["sql"] for q in queries.captured_queries if table in q["sql"] and q["sql"].lstrip().upper().startswith("SELECT")]
    assert locks, [q["sql"] for q in queries.captured_queries]
    if connection.features.has_select_for_update:  # PostgreSQL; SQLite's writing transaction locks the database
        assert "FOR UPDATE" in locks[0]
    else:
        assert connection.settings_dict.get("OPTIONS", {}).get("transaction_mode") == "IMMEDIATE"
