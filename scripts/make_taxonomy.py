"""Generate `src/paperdesk/subjects/data/taxonomy.json` from arXiv's category list.

Run once (and again only when arXiv changes its taxonomy):

    .venv/bin/python scripts/make_taxonomy.py ../shared/data/arxiv/taxonomy/arXiv_categories.json

`arXiv_categories.json` (arXiv/arxiv-base, MIT) holds every category with its archive, name
and active flag, but not the groups, the alias pairs or which defunct archives were
subsumed by which category. Those facts live in arxiv-base's `taxonomy/definitions.py`
(`GROUPS`, `ARCHIVES[...]['in_group']`, `CATEGORY_ALIASES`, `ARCHIVES_SUBSUMED`,
`LEGACY_ARCHIVE_AS_PRIMARY/SECONDARY`) and are restated below as small tables, so the
generated file is self-contained package data and the package never needs arxiv-base.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src/paperdesk/subjects/data/taxonomy.json"

GROUPS = {
    "physics": "Physics",
    "math": "Mathematics",
    "q-bio": "Quantitative Biology",
    "cs": "Computer Science",
    "q-fin": "Quantitative Finance",
    "stat": "Statistics",
    "eess": "Electrical Engineering and Systems Science",
    "econ": "Economics",
}

# archive -> group for the archives that are not in the physics group (the default).
ARCHIVE_GROUP = {
    "alg-geom": "math",
    "dg-ga": "math",
    "funct-an": "math",
    "q-alg": "math",
    "math": "math",
    "cmp-lg": "cs",
    "cs": "cs",
    "q-bio": "q-bio",
    "q-fin": "q-fin",
    "stat": "stat",
    "eess": "eess",
    "econ": "econ",
}

# alias -> canonical; arXiv lists a paper in both, and shows the canonical one.
CATEGORY_ALIASES = {
    "math.MP": "math-ph",
    "stat.TH": "math.ST",
    "math.IT": "cs.IT",
    "q-fin.EC": "econ.GN",
    "cs.SY": "eess.SY",
    "cs.NA": "math.NA",
}

# defunct archive -> the category that took it over.
ARCHIVES_SUBSUMED = {
    "cmp-lg": "cs.CL",
    "adap-org": "nlin.AO",
    "comp-gas": "nlin.CG",
    "chao-dyn": "nlin.CD",
    "solv-int": "nlin.SI",
    "patt-sol": "nlin.PS",
    "alg-geom": "math.AG",
    "dg-ga": "math.DG",
    "funct-an": "math.FA",
    "q-alg": "math.QA",
    "mtrl-th": "cond-mat.mtrl-sci",
    "supr-con": "cond-mat.supr-con",
    "acc-phys": "physics.acc-ph",
    "ao-sci": "physics.ao-ph",
    "atom-ph": "physics.atom-ph",
    "bayes-an": "physics.data-an",
    "chem-ph": "physics.chem-ph",
    "plasm-ph": "physics.plasm-ph",
}

# Bare archive names that old papers used as a category (no longer allowed).
LEGACY_BARE_ARCHIVES = {"astro-ph", "cond-mat", "q-bio"}


def build(entries: list[dict]) -> dict:
    archives: dict[str, dict] = {}
    categories: dict[str, dict] = {}
    for e in entries:
        arch, sub = e["archive"], e["subject_class"]
        if arch == "test":
            continue  # arXiv's internal test archive: never a subject users should see
        group = ARCHIVE_GROUP.get(arch, "physics")
        if sub == "" and e["definitive"] == 0:
            archives[arch] = {"name": e["category_name"], "group": group, "active": True}
            continue
        archives.setdefault(
            arch, {"name": e["category_name"], "group": group, "active": bool(e["active"])}
        )
        if sub in ("", "none"):
            code = arch
        else:
            code = f"{arch}.{sub}"
        if sub == "none":
            continue  # `cond-mat.none`: arXiv's placeholder for the bare legacy `cond-mat`
        active = bool(e["active"]) and code not in LEGACY_BARE_ARCHIVES
        categories[code] = {
            "id": code,
            "name": e["category_name"],
            "archive": arch,
            "group": group,
            "active": active,
            "canonical": CATEGORY_ALIASES.get(code, ARCHIVES_SUBSUMED.get(code, code)),
            "aliases": [],
        }
    for code in LEGACY_BARE_ARCHIVES:
        if code not in categories:
            a = archives[code]
            categories[code] = {
                "id": code,
                "name": a["name"],
                "archive": code,
                "group": a["group"],
                "active": False,
                "canonical": code,
                "aliases": [],
            }
    for alias, canon in {**CATEGORY_ALIASES, **ARCHIVES_SUBSUMED}.items():
        assert alias in categories and canon in categories, (alias, canon)
        categories[canon]["aliases"].append(alias)
    return {
        "source": "arXiv/arxiv-base taxonomy (arXiv_categories.json + definitions.py), MIT",
        "groups": GROUPS,
        "archives": dict(sorted(archives.items())),
        "categories": [categories[k] for k in sorted(categories)],
    }


def main() -> None:
    src = Path(
        sys.argv[1] if len(sys.argv) > 1 else "../shared/data/arxiv/taxonomy/arXiv_categories.json"
    )
    data = build(json.loads(src.read_text()))
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{OUT}: {len(data['categories'])} categories, {len(data['archives'])} archives")


if __name__ == "__main__":
    main()
