"""A plain form: every rule written out, the uniqueness rule included."""

import string

from django import forms

from cargo.models import Booking, Sailing

ALLOWED = set(string.ascii_uppercase + string.digits)


class BookingForm(forms.Form):
    sailing = forms.ModelChoiceField(queryset=Sailing.objects.all())
    plate = forms.CharField()
    length = forms.IntegerField(min_value=2, max_value=18)

    def clean_plate(self):
        plate = self.cleaned_data["plate"].replace(" ", "").upper()
        if not (2 <= len(plate) <= 8 and set(plate) <= ALLOWED):
            raise forms.ValidationError("Use 2 to 8 letters A-Z and digits.", code="bad_plate")
        return plate

    def clean(self):
        data = super().clean()
        sailing = data.get("sailing")
        if sailing is None:
            return data
        if "length" in data and data["length"] + sailing.booked_metres > sailing.lane_metres:
            self.add_error("length", forms.ValidationError("The deck is full.", code="deck_full"))
        if "plate" in data and Booking.objects.filter(sailing=sailing, plate=data["plate"]).exists():
            self.add_error(None, forms.ValidationError("Already booked.", code="plate_booked"))
        return data

    def save(self):
        return Booking.objects.create(
            sailing=self.cleaned_data["sailing"], plate=self.cleaned_data["plate"], length=self.cleaned_data["length"]
        )
