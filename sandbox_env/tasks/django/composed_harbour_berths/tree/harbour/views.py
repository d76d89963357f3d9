"""The views project/urls.py routes to: berth_detail, moor, mooring_detail. Write them (see the task)."""
