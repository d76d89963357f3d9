from django.db import models
from django.db.models import Count, Sum


class ProductQuerySet(models.QuerySet):
    def active(self):
        return self.filter(is_active=True)

    def with_paid_stats(self):
        # filters before aggregating: products without a paid order drop out, and sums may be None
        return self.filter(orders__status="paid").annotate(
            paid_orders=Count("orders"), paid_units=Sum("orders__quantity")
        )
