import django
from django.shortcuts import render


def home(request):
    return render(request, "home.html", {"django_version": django.get_version()})
