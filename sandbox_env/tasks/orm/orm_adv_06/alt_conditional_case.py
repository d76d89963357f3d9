# sums of Case expressions instead of filtered aggregates, and the zero filled in Python
qs = Store.objects.filter(is_online=False).annotate(
    y23=Sum(Case(When(sales__sold_on__year=2023, then="sales__quantity"), default=Value(0))),
    y24=Sum(Case(When(sales__sold_on__year=2024, then="sales__quantity"), default=Value(0))),
).order_by("name")
result = [(s.name, s.y23 or 0, s.y24 or 0) for s in qs]
