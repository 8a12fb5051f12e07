import pytest


@pytest.fixture(autouse=True)
def _fresh_inline_queue():
    """Work queued in inline mode by earlier tests of this thread is not ours to run."""
    from facilitation.workspace import scheduling

    scheduling.take_inline()
    yield
    scheduling.take_inline()
