qs = Book.objects.filter(published__month__in=[10, 11, 12], publisher__country__in=["UK", "USA"]).order_by("-published", "title")
result = [(b.title, b.published.isoformat(), b.publisher.country) for b in qs.select_related("publisher")]
