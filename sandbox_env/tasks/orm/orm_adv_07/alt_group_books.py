# grouped from the Book side with values(), the year compared through __year
qs = (
    Book.objects.values("publisher__name")
    .annotate(total=Count("id"), recent=Count("id", filter=Q(published__year__gte=2020)))
    .filter(total__gte=7)
    .order_by("publisher__name")
)
result = [(r["publisher__name"], r["total"], r["recent"]) for r in qs]
