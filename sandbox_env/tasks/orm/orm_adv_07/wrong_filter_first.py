qs = (
    Publisher.objects.filter(books__published__gte=date(2020, 1, 1))
    .annotate(total=Count("books"), recent=Count("books"))
    .filter(total__gte=7)
    .order_by("name")
)
result = list(qs.values_list("name", "total", "recent"))
