"""BookingForm: write it (see the task)."""
