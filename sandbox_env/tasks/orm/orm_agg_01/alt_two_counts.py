# two count() queries instead of one conditional aggregate
result = [(Book.objects.filter(in_print=True).count(), Book.objects.exclude(in_print=True).count())]
