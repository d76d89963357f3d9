# grouped from the Book side with values(); books without a genre filtered out first
qs = (
    Book.objects.exclude(genre=None)
    .values("genre__name")
    .annotate(lo=Min("price"), hi=Max("price"))
    .order_by("genre__name")
)
result = [(r["genre__name"], format(r["lo"], ".2f"), format(r["hi"], ".2f")) for r in qs]
