"""The views project/urls.py routes to: bike_list, start_hire, return_hire. Write them (see the task)."""
