"""Django settings for the fixture: one app, one SQLite file named by ORM_FIXTURE_DB."""

import os

SECRET_KEY = "orm-fixture-not-secret"
DEBUG = False
USE_TZ = False
TIME_ZONE = "UTC"
INSTALLED_APPS = ["orm_fixture.shop"]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("ORM_FIXTURE_DB", "/tmp/orm.sqlite3"),
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
