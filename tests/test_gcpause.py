"""`gc_paused`: the collector is off inside, restored after, and left alone when not asked."""

import gc

import pytest

from paperdesk.gcpause import gc_paused


def test_paused_inside_and_restored_after_an_error() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_pause_false_leaves_the_collector_on() -> None:
    with gc_paused(False):
        assert gc.isenabled()
    assert gc.isenabled()
