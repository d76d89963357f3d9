qs = (
    Book.objects.filter(genre__isnull=False)
    .annotate(r=Window(Rank(), partition_by=F("genre_id"), order_by=F("price").desc()))
    .filter(r__lte=2)
    .order_by("genre__name", "r", "title")
)
result = [(g, r, t, format(p, ".2f")) for g, r, t, p in qs.values_list("genre__name", "r", "title", "price")]
