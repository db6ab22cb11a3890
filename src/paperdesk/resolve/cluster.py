"""Clustering under constraints: union-find that refuses merges a constraint forbids.

Pairs are merged best-first (highest score first), so a record joins the work it matches
best before a weaker link could drag it elsewhere. A merge is refused when the two groups
hold different values of one identifier type (two DOIs, two arXiv ids, two DBLP keys: two
papers by definition) or when a curator split them. Curated merges are forced. This keeps
transitive chaining from gluing distinct papers together through a shared neighbour.
"""

from __future__ import annotations

from collections.abc import Sequence

from paperdesk.resolve.works import Doc


class Clusterer:
    """Union-find over `docs` with identifier and cannot-link checks."""

    def __init__(self, docs: Sequence[Doc]):
        self.docs = docs
        self.parent = list(range(len(docs)))
        self.members: dict[int, list[int]] = {i: [i] for i in range(len(docs))}
        self.ids: dict[int, dict[str, set[str]]] = {}
        for i, d in enumerate(docs):
            if d.ids:
                self.ids[i] = {k: {v} for k, v in d.ids}
        self.forbidden: dict[int, set[int]] = {}
        """root -> record indexes it must never join."""

    def find(self, i: int) -> int:
        p = self.parent
        while p[i] != i:
            p[i] = p[p[i]]
            i = p[i]
        return i

    def forbid(self, i: int, j: int) -> None:
        """Cannot-link: i and j (and their groups) stay apart."""
        self.forbidden.setdefault(self.find(i), set()).add(j)
        self.forbidden.setdefault(self.find(j), set()).add(i)

    def allowed(self, ra: int, rb: int) -> bool:
        ia, ib = self.ids.get(ra), self.ids.get(rb)
        if ia and ib:
            for k, vals in ia.items():
                other = ib.get(k)
                if other is not None and vals.isdisjoint(other):
                    return False
        fa, fb = self.forbidden.get(ra), self.forbidden.get(rb)
        if fa and any(self.find(x) == rb for x in fa):
            return False
        if fb and any(self.find(x) == ra for x in fb):
            return False
        return True

    def union(self, i: int, j: int, force: bool = False) -> bool:
        """Merge the groups of i and j; False when a constraint refuses (unless forced)."""
        ra, rb = self.find(i), self.find(j)
        if ra == rb:
            return True
        if not force and not self.allowed(ra, rb):
            return False
        if len(self.members[ra]) < len(self.members[rb]):
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.members[ra].extend(self.members.pop(rb))
        ib = self.ids.pop(rb, None)
        if ib:
            ia = self.ids.setdefault(ra, {})
            for k, vals in ib.items():
                ia.setdefault(k, set()).update(vals)
        fb = self.forbidden.pop(rb, None)
        if fb:
            self.forbidden.setdefault(ra, set()).update(fb)
        return True

    def link_identities(self) -> None:
        """Stage 1: records sharing an identity key join (strongest key type first)."""
        first: dict[tuple[str, str], int] = {}
        for i, d in enumerate(self.docs):
            for ident in d.ids:
                j = first.setdefault(ident, i)
                if j != i:
                    self.union(j, i)

    def groups(self) -> list[list[int]]:
        return [sorted(m) for m in self.members.values()]
