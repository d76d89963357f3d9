# the title lowercased, then contains, instead of icontains
qs = Book.objects.annotate(lowered=Lower("title")).filter(lowered__contains="night").exclude(in_print=False)
result = [(b.title,) for b in qs.order_by("title")]
