qs = (
    Book.objects.filter(publisher__name__in=["Quarto Verde", "Lagos Lighthouse"])
    .annotate(e=Coalesce("sale_price", "price"))
    .order_by("e", "title")
)
result = [(b.title, format(b.e, ".2f")) for b in qs]
