"""Fixtures shared by the whole suite (pytest-django provides client, db, admin_user ...)."""
