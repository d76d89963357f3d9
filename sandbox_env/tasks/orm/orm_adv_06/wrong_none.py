qs = (
    Store.objects.filter(is_online=False)
    .annotate(
        y23=Sum("sales__quantity", filter=Q(sales__sold_on__year=2023)),
        y24=Sum("sales__quantity", filter=Q(sales__sold_on__year=2024)),
    )
    .order_by("name")
)
result = list(qs.values_list("name", "y23", "y24"))
