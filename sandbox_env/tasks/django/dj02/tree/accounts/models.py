from django.db import models


class Member(models.Model):
    username = models.CharField(max_length=30, unique=True)
    email = models.EmailField()

    def __str__(self):
        return self.username
