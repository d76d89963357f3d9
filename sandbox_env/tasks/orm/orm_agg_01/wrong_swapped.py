result = [(Book.objects.filter(in_print=False).count(), Book.objects.filter(in_print=True).count())]
