"""The QuerySet behind Product.objects: write ProductQuerySet here (see the task)."""
