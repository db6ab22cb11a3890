"""The clustering rule (`authors_cluster.Linkage`): a strong link carries a chain of
evidence that plain average linkage lets the person's other papers outvote, and a lone
coincidence against a wall of disagreement still does not merge."""

from __future__ import annotations

import numpy as np
import pytest

from paperdesk.resolve.authors_cluster import Linkage, cluster_block
from paperdesk.resolve.authors_model import default_model


def _two_groups(cross: float, link: float) -> np.ndarray:
    """Items 0-3 (one lab's papers) and 4-5 (the same person later, elsewhere): close
    within each group, `cross` apart between them but for one pair (1, 4) at `link`."""
    d = np.full((6, 6), 0.02)
    d[:4, 4:] = d[4:, :4] = cross
    d[1, 4] = d[4, 1] = link
    np.fill_diagonal(d, 0.0)
    return d


def test_a_strong_link_joins_what_the_average_keeps_apart() -> None:
    none = np.zeros((6, 6), dtype=bool)
    d = _two_groups(cross=0.7, link=0.1)  # average between the groups: 0.625
    assert len(set(cluster_block(d, none, 0.35))) == 2
    assert len(set(cluster_block(d, none, Linkage(0.35, 0.2, 0.8)))) == 1
    # The same bound as a float threshold is plain average linkage.
    assert cluster_block(d, none, 0.35) == cluster_block(d, none, Linkage(0.35))


def test_a_strong_link_does_not_outweigh_everything() -> None:
    none = np.zeros((6, 6), dtype=bool)
    # One close pair, every other pair between the groups certain to be two people.
    d = _two_groups(cross=1.0, link=0.1)  # average 0.8875 > loose
    assert len(set(cluster_block(d, none, Linkage(0.35, 0.2, 0.8)))) == 2
    # A link that is not strong enough leaves average linkage alone.
    d = _two_groups(cross=0.7, link=0.3)
    assert len(set(cluster_block(d, none, Linkage(0.35, 0.2, 0.8)))) == 2
    # Cannot-links still win.
    cannot = none.copy()
    cannot[0, 5] = cannot[5, 0] = True
    d = _two_groups(cross=0.7, link=0.1)
    labels = cluster_block(d, cannot, Linkage(0.35, 0.2, 0.8))
    assert labels[0] != labels[5]


def test_strong_is_bounded_by_the_threshold() -> None:
    """The early exits (no pair under the threshold: no merge) need strong <= threshold."""
    with pytest.raises(ValueError):
        Linkage(0.3, 0.4, 0.8)


def test_the_shipped_model_carries_its_rule() -> None:
    model = default_model()
    link = model.linkage
    assert link.threshold == model.threshold and 0.0 <= link.strong <= link.threshold
    assert link.strong == 0.0 or link.loose > link.threshold
