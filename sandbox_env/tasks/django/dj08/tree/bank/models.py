from django.db import models


class Account(models.Model):
    owner = models.CharField(max_length=50, unique=True)
    balance = models.DecimalField(max_digits=12, decimal_places=2, default=0)

    def __str__(self):
        return self.owner


class Transfer(models.Model):
    source = models.ForeignKey(Account, related_name="outgoing", on_delete=models.PROTECT)
    target = models.ForeignKey(Account, related_name="incoming", on_delete=models.PROTECT)
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    created = models.DateTimeField(auto_now_add=True)
