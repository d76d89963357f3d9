from django.apps import apps
from django.db import models
from django.db.models import Count, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce


class ProductQuerySet(models.QuerySet):
    def active(self):
        return self.filter(is_active=True)

    def with_paid_stats(self):
        order = apps.get_model("shop", "Order")
        paid = order.objects.filter(product=OuterRef("pk"), status="paid").order_by().values("product")
        return self.annotate(
            paid_orders=Coalesce(Subquery(paid.annotate(n=Count("pk")).values("n")), 0),
            paid_units=Coalesce(Subquery(paid.annotate(units=Sum("quantity")).values("units")), 0),
        )
