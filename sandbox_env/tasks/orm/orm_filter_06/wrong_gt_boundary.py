qs = Book.objects.filter(
    Q(genre__name="Science Fiction", price__gt=25) | Q(pages__lt=200, in_print=True)
).order_by("title")
result = [(t, g, p, format(pr, ".2f")) for t, g, p, pr in qs.values_list("title", "genre__name", "pages", "price")]
