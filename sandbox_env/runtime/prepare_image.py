"""Runs once at image build time, as root: prepares data that every container shares.

Builds the orm fixture database at /opt/websandbox/orm.sqlite3, readable by all and
writable by none but root; each rollout's session works on its own copy in /tmp.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ORM_DB = "/opt/websandbox/orm.sqlite3"


def main() -> None:
    from orm_fixture.build import build_database, digest

    build_database(ORM_DB)
    os.chmod(ORM_DB, 0o644)
    print(f"orm fixture: {ORM_DB} sha256 {digest(ORM_DB)}")


if __name__ == "__main__":
    main()
