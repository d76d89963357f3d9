qs = (
    Store.objects.filter(is_online=False)
    .annotate(
        y23=Coalesce(Sum("sales__quantity", filter=Q(sales__sold_on__year=2023)), 0),
        y24=Coalesce(Sum("sales__quantity", filter=Q(sales__sold_on__year=2024)), 0),
    )
    .order_by("name")
)
result = list(qs.values_list("name", "y23", "y24"))
