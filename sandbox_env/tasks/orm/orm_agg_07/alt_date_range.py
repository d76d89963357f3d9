# a date range instead of __year, and the aggregate keys named after the columns
qs = (
    Sale.objects.filter(sold_on__range=(date(2023, 1, 1), date(2023, 12, 31)))
    .values("store__country")
    .annotate(units=Sum("quantity"), sales=Count("pk"))
    .order_by("-units", "store__country")
)
result = [(r["store__country"], r["units"], r["sales"]) for r in qs]
