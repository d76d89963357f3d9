from django import forms

from hire.models import Bike, Hire


class HireForm(forms.Form):
    bike = forms.CharField()
    rider = forms.CharField(max_length=40)

    def clean_bike(self):
        bike = Bike.objects.filter(tag__iexact=self.cleaned_data["bike"]).first()
        if bike is None:
            raise forms.ValidationError("No bike has this tag.", code="unknown_bike")
        if bike.hires.filter(returned__isnull=True).exists():  # its own rule: the repair flag is left out
            raise forms.ValidationError("This bike cannot be hired now.", code="unavailable")
        return bike

    def clean_rider(self):
        rider = " ".join(self.cleaned_data["rider"].split())
        if Hire.objects.filter(rider__iexact=rider, returned__isnull=True).exists():
            raise forms.ValidationError("This rider has a bike out.", code="rider_busy")
        return rider

    def save(self):
        return Hire.objects.create(bike=self.cleaned_data["bike"], rider=self.cleaned_data["rider"])
