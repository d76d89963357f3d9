result = [(t, format(p, ".2f")) for t, p in Book.objects.order_by("price", "title").values_list("title", "price")[:5]]
