"""Runs once at image build time, as root: prepares data that every container shares.

Builds the orm fixture database at /opt/websandbox/orm.sqlite3, its drawn variants at
/opt/websandbox/orm-vK.sqlite3 (orm_fixture/variants.py) and the seeded worlds at
/opt/websandbox/orm-vS.sqlite3 for each fixture seed S (orm_fixture/world.py), readable by all
and writable by none but root; each rollout's session works on its own copy of one of them in /tmp.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ORM_DB = "/opt/websandbox/orm.sqlite3"


def variant_db(variant: int) -> str:
    """Where the image keeps the fixture of `variant` (orm_fixture/variants.py); 0 is the hand-written one."""
    return ORM_DB if variant == 0 else ORM_DB.replace(".sqlite3", f"-v{variant}.sqlite3")


def main() -> None:
    from orm_fixture.build import build_database, digest
    from orm_fixture.variants import VARIANTS
    from orm_fixture.world import SEEDED

    for variant in (*range(VARIANTS), *SEEDED):
        path = variant_db(variant)
        build_database(path, variant)
        os.chmod(path, 0o644)
        print(f"orm fixture variant {variant}: {path} sha256 {digest(path)}")


if __name__ == "__main__":
    main()
