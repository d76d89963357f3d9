# lte 1969 instead of lt 1970, the values read through select_related
qs = (
    Book.objects.select_related("publisher")
    .filter(in_print=True, publisher__founded__lte=1969)
    .order_by("publisher__founded", "title")
)
result = [(b.publisher.name, b.publisher.founded, b.title) for b in qs]
