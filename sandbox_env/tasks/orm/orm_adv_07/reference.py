qs = (
    Publisher.objects.annotate(
        total=Count("books"), recent=Count("books", filter=Q(books__published__gte=date(2020, 1, 1)))
    )
    .filter(total__gte=7)
    .order_by("name")
)
result = list(qs.values_list("name", "total", "recent"))
