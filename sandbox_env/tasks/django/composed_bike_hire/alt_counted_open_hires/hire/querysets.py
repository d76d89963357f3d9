"""Availability by counting a bike's open hires; the stats as a second annotation over the same join."""

from django.db import models
from django.db.models import Count, Max, Q


class BikeQuerySet(models.QuerySet):
    def available(self):
        return self.annotate(_open_hires=Count("hires", filter=Q(hires__returned=None))).filter(
            _open_hires=0, in_repair=False
        )

    def with_hire_stats(self):
        return self.annotate(hire_count=Count("hires", distinct=True), last_started=Max("hires__started"))
