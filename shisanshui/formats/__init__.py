"""Project overrides of Django's locale formats (``FORMAT_MODULE_PATH``)."""
