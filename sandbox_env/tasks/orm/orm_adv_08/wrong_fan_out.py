qs = (
    Publisher.objects.filter(books__isnull=False)
    .annotate(u=Coalesce(Sum("books__sales__quantity"), 0), r=Count("books__reviews"))
    .order_by("-u", "name")
)
result = list(qs.values_list("name", "u", "r"))
