genre_avg = Book.objects.filter(genre=OuterRef("genre")).values("genre").annotate(a=Avg("price")).values("a")
qs = (
    Book.objects.filter(genre__isnull=False)
    .annotate(ga=Subquery(genre_avg))
    .filter(price__gt=F("ga"))
    .order_by("genre__name", "-price", "title")
)
result = [(g, t, format(p, ".2f")) for g, t, p in qs.values_list("genre__name", "title", "price")]
