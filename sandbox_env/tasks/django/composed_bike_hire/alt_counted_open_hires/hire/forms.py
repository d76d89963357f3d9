"""The bike looked up by its capitalised tag, availability asked of the queryset; the form validated in clean()."""

import re

from django import forms
from django.core.exceptions import ValidationError

from hire.models import Bike, Hire


class HireForm(forms.Form):
    bike = forms.CharField(required=True)
    rider = forms.CharField(required=True, max_length=40)

    def clean(self):
        data = super().clean()
        if "bike" in data:
            tag = data["bike"].upper()
            bike = Bike.objects.filter(tag=tag).first()
            if bike is None:
                self.add_error("bike", ValidationError("unknown", code="unknown_bike"))
            elif not Bike.objects.available().filter(tag=tag).exists():
                self.add_error("bike", ValidationError("not now", code="unavailable"))
            else:
                data["bike"] = bike
        if "rider" in data:
            rider = re.sub(r"\s+", " ", data["rider"]).strip()
            busy = Hire.objects.filter(returned__isnull=True).filter(rider__iexact=rider)
            if busy.exists():
                self.add_error("rider", ValidationError("busy", code="rider_busy"))
            else:
                data["rider"] = rider
        return data

    def save(self):
        hire = Hire(bike=self.cleaned_data["bike"], rider=self.cleaned_data["rider"])
        hire.save()
        return hire
