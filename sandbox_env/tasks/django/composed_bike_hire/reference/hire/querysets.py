from django.db import models
from django.db.models import Count, Exists, Max, OuterRef


class BikeQuerySet(models.QuerySet):
    def available(self):
        hire = self.model._meta.get_field("hires").related_model
        open_hires = hire.objects.filter(bike=OuterRef("pk"), returned__isnull=True)
        return self.filter(in_repair=False).exclude(Exists(open_hires))

    def with_hire_stats(self):
        return self.annotate(hire_count=Count("hires"), last_started=Max("hires__started"))
