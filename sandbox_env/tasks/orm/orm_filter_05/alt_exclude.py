# exclude(in_print=True) instead of in_print=False, values read through select_related
qs = Book.objects.select_related("publisher").exclude(in_print=True).filter(publisher__is_independent=True)
result = [(b.publisher.name, b.title) for b in qs.order_by("publisher__name", "title")]
