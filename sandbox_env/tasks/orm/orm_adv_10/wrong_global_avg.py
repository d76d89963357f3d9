avg = Book.objects.aggregate(a=Avg("price"))["a"]
qs = Book.objects.filter(genre__isnull=False, price__gt=avg).order_by("genre__name", "-price", "title")
result = [(g, t, format(p, ".2f")) for g, t, p in qs.values_list("genre__name", "title", "price")]
