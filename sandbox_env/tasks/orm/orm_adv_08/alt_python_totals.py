# two grouped queries merged in Python, sorted in Python
units = dict(Sale.objects.values_list("book__publisher__name").annotate(s=Sum("quantity")).order_by())
reviews = dict(Review.objects.values_list("book__publisher__name").annotate(c=Count("id")).order_by())
names = Publisher.objects.filter(books__isnull=False).distinct().values_list("name", flat=True)
rows = [(name, units.get(name, 0), reviews.get(name, 0)) for name in names]
result = sorted(rows, key=lambda r: (-r[1], r[0]))
