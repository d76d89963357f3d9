from django.db import models
from django.db.models import Count, Q, Sum, Value
from django.db.models.functions import Coalesce

PAID = Q(orders__status="paid")


class ProductQuerySet(models.QuerySet):
    def active(self):
        return self.filter(is_active=True)

    def with_paid_stats(self):
        return self.annotate(
            paid_orders=Count("orders", filter=PAID),
            paid_units=Coalesce(Sum("orders__quantity", filter=PAID), Value(0)),
        )
