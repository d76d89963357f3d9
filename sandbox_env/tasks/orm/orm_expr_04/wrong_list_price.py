t = Sale.objects.aggregate(u=Sum("quantity"), r=Sum(F("quantity") * F("book__price")), b=Count("book", distinct=True))
result = [(t["u"], format(t["r"], ".2f"), t["b"])]
