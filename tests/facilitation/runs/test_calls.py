"""facilitation.runs.calls: a model call in flight and the database connection of its thread."""
import time

import pytest
from django.db import connection

from facilitation.llm import LLMRequest, LLMResponse
from facilitation.llm.base import Provider
from facilitation.runs.calls import POLL_SECONDS, call_model
from rooms.models import Room


class Slow(Provider):
    name = "slow"

    def __init__(self, seconds: float):
        self.seconds = seconds

    def complete(self, request):
        time.sleep(self.seconds)
        return LLMResponse(text="done", provider=self.name, model="slow")


def holding_between_checks() -> list[bool]:
    """Run a call long enough for three lease checks; whether the thread held a connection as each began."""
    held = []

    def check() -> bool:
        held.append(connection.connection is not None)
        list(Room.objects.values_list("pk", flat=True)[:1])  # a lease check reads the database
        return False

    answer = call_model(Slow(POLL_SECONDS * 3.5), LLMRequest(system="s", messages=[], purpose="test"), 10, check)
    assert answer.text == "done"
    return held


@pytest.mark.django_db(transaction=True)
def test_a_pooled_connection_goes_back_to_the_pool_between_lease_checks():
    """A hundred calls in flight must not each keep a pooled connection from one check to the next."""
    if connection.vendor != "postgresql":
        pytest.skip("connection pools are a PostgreSQL feature")
    connection.close()
    options = connection.settings_dict["OPTIONS"]
    options["pool"] = {"min_size": 1, "max_size": 2}
    try:
        assert connection.pool is not None
        held = holding_between_checks()
    finally:
        connection.close()
        connection.close_pool()
        del options["pool"]
    assert held == [False, False, False]


@pytest.mark.django_db(transaction=True)
def test_an_unpooled_connection_is_kept_between_checks():
    """Without a pool, closing would mean connecting again every check: the connection stays."""
    held = holding_between_checks()
    assert held[1:] == [True, True]


class WhereCalled(Provider):
    name = "where"

    def __init__(self, inline: bool):
        self.inline, self.thread = inline, None

    def complete(self, request):
        import threading

        self.thread = threading.get_ident()
        return LLMResponse(text="here", provider=self.name, model="where")


def test_a_model_that_answers_in_process_is_called_in_the_steps_own_thread():
    import threading

    request = LLMRequest(system="s", messages=[], purpose="test")
    inline, handed = WhereCalled(inline=True), WhereCalled(inline=False)
    assert call_model(inline, request, 5, lambda: False).text == "here"
    assert call_model(handed, request, 5, lambda: False).text == "here"
    assert inline.thread == threading.get_ident()
    assert handed.thread not in (None, threading.get_ident())


def test_only_models_with_nothing_to_wait_for_answer_in_process():
    from facilitation.llm.chain import FallbackChain
    from facilitation.llm.rehearsal import RehearsalProvider
    from facilitation.llm.scripted import ScriptedProvider

    assert RehearsalProvider().inline and not RehearsalProvider(pace=0.5).inline
    assert ScriptedProvider().inline
    assert not ScriptedProvider([{"purpose": "contribution", "delay": 5}]).inline
    assert FallbackChain([RehearsalProvider(), ScriptedProvider()]).inline
    assert not FallbackChain([RehearsalProvider(), Slow(1)]).inline


def test_a_slow_model_is_still_given_up_at_the_timeout():
    from facilitation.runs.calls import StepTimeout

    started = time.monotonic()
    with pytest.raises(StepTimeout):
        call_model(Slow(3), LLMRequest(system="s", messages=[], purpose="test"), 0.3, lambda: False)
    assert time.monotonic() - started < 2
