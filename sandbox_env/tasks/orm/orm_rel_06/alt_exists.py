# one Exists over the reviews: the same review meets both conditions
review = Review.objects.filter(book=OuterRef("pk"), verified=False, rating=5)
result = [(t,) for t in Book.objects.filter(Exists(review)).order_by("title").values_list("title", flat=True)]
