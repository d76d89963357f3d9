monthly = (
    Sale.objects.filter(store__name="Paper Lantern", sold_on__year=2024)
    .annotate(month=TruncMonth("sold_on"))
    .values("month")
    .annotate(units=Sum("quantity"))
    .order_by("month")
)
result = [(r["month"].strftime("%Y-%m"), r["units"], r["units"]) for r in monthly]
