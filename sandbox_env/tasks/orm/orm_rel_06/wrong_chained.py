qs = Book.objects.filter(reviews__verified=False).filter(reviews__rating=5).distinct().order_by("title")
result = [(t,) for t in qs.values_list("title", flat=True)]
