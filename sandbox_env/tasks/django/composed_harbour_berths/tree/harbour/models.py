from django.db import models
from django.db.models import F, Q


class Berth(models.Model):
    code = models.CharField(max_length=3, unique=True)
    max_length = models.PositiveIntegerField()  # the longest vessel it takes, in metres

    def __str__(self):
        return self.code


class Mooring(models.Model):
    berth = models.ForeignKey(Berth, related_name="moorings", on_delete=models.CASCADE)
    vessel = models.CharField(max_length=40)
    length = models.PositiveIntegerField()
    arrives = models.DateField()
    leaves = models.DateField()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(leaves__gt=F("arrives")), name="mooring_leaves_after_it_arrives"),
        ]
