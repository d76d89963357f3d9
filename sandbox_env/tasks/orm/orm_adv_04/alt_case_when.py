# Case/When instead of Coalesce
effective = Case(When(sale_price__isnull=False, then=F("sale_price")), default=F("price"))
qs = (
    Book.objects.filter(Q(publisher__name="Quarto Verde") | Q(publisher__name="Lagos Lighthouse"))
    .annotate(effective=effective)
    .order_by("effective", "title")
)
result = [(title, format(value, ".2f")) for title, value in qs.values_list("title", "effective")]
