"""Keeps Sailing.booked_metres right whatever code changes the bookings: write it (see the task)."""
