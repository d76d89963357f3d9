"""The orm session: the Python session a rollout works in, and every grading world's session, over a fixture database.

Its first cell (`session_preamble`) copies a database to the session's private file, sets Django up
and imports the names the prompt promises. Rollouts (families/orm.py) and the replay of a rollout's
cells over grading worlds (families/orm_replay.py) start the same session.
"""

from __future__ import annotations

from sandbox_env.constants import CONTAINER_RUNTIME as RUNTIME
from sandbox_env.constants import ORM_IMAGE_DB

IMAGE_DB = ORM_IMAGE_DB


def image_db(variant: int) -> str:
    """The image's fixture database of `variant` (runtime/container/prepare_image.py); 0 is the hand-written one."""
    return IMAGE_DB if variant == 0 else IMAGE_DB.replace(".sqlite3", f"-v{variant}.sqlite3")


SESSION_DB = "/tmp/orm.sqlite3"  # each session's private copy
SESSION_ENV = {"DJANGO_SETTINGS_MODULE": "orm_fixture.settings", "ORM_FIXTURE_DB": SESSION_DB}
MODELS = ("Publisher", "Author", "Genre", "Book", "Store", "Sale", "Review", "Contribution")
DB_NAMES = (
    "Q",
    "F",
    "Count",
    "Sum",
    "Avg",
    "Max",
    "Min",
    "Value",
    "ExpressionWrapper",
    "Subquery",
    "OuterRef",
    "Exists",
    "Case",
    "When",
    "Window",
    "FloatField",
    "IntegerField",
    "DecimalField",
    "CharField",
)
FUNCTION_NAMES = (
    "Coalesce",
    "Cast",
    "ExtractYear",
    "ExtractMonth",
    "TruncMonth",
    "TruncYear",
    "Lower",
    "Upper",
    "Length",
    "Concat",
    "Round",
    "NullIf",
    "RowNumber",
    "Rank",
    "DenseRank",
    "Lag",
    "Lead",
)


def session_preamble(copy_image_db: bool = True, variant: int = 0, source: str | None = None) -> str:
    """The session's first cell: a fresh copy of the database (of `variant`, or the file `source`), Django set up,
    the usual names imported.

    It runs again whenever the session restarts, so a restart also restores the data.
    """
    source = source or image_db(variant)
    copy = f"import shutil as _sh; _sh.copyfile({source!r}, {SESSION_DB!r}); del _sh\n" if copy_image_db else ""
    return (
        f"import sys as _sys; _sys.path.append({RUNTIME!r}); del _sys\n" + copy + "import django; django.setup()\n"
        "from datetime import date\n"
        "from decimal import Decimal\n"
        "from django.db import connection\n"
        f"from django.db.models import {', '.join(DB_NAMES)}\n"
        f"from django.db.models.functions import {', '.join(FUNCTION_NAMES)}\n"
        f"from orm_fixture.shop.models import {', '.join(MODELS)}\n"
    )
