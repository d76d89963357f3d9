t = Sale.objects.aggregate(u=Sum("quantity"), r=Sum(F("quantity") * F("unit_price")), b=Count("book", distinct=True))
result = [(t["u"], format(t["r"], ".2f"), t["b"])]
