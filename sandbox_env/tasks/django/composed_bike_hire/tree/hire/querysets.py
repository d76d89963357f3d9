"""BikeQuerySet: write it (see the task)."""
from django.db import models


class BikeQuerySet(models.QuerySet):
    pass
