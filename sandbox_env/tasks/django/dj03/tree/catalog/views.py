from django.http import HttpResponsePermanentRedirect, JsonResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse

from catalog.models import Article


def year_archive(request, year):
    return JsonResponse({"view": "year", "year": year})


def month_archive(request, year, month):
    return JsonResponse({"view": "month", "year": year, "month": month})


def article_detail(request, slug):
    article = get_object_or_404(Article, slug=slug)
    return JsonResponse({"view": "detail", "slug": article.slug, "title": article.title})


def article_short(request, pk):
    article = get_object_or_404(Article, pk=pk)
    return HttpResponsePermanentRedirect(reverse("catalog:article-detail", kwargs={"slug": article.slug}))


def doc_page(request, page):
    return JsonResponse({"view": "doc", "page": page})
