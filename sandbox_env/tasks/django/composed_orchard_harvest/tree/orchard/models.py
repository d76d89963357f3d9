from django.db import models


class Orchard(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=60)

    def __str__(self):
        return self.name


class Picking(models.Model):
    orchard = models.ForeignKey(Orchard, related_name="pickings", on_delete=models.CASCADE)
    year = models.PositiveIntegerField()
    week = models.PositiveSmallIntegerField()  # 1 to 53
    picker = models.CharField(max_length=40)
    crates = models.PositiveIntegerField()
